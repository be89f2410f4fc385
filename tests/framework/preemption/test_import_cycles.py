"""No import cycle inside the preemption packages (issue 14: DefaultPreemption's
``plugin -> vector -> plugin`` and ``vector <-> answers`` cycles are gone).

The graph is grimp's (import-linter's engine): it counts imports under
``TYPE_CHECKING`` and inside functions too, so a cycle hidden that way fails here.
"""

from __future__ import annotations

import grimp
import pytest


@pytest.fixture(scope="module")
def graph() -> grimp.ImportGraph:
    return grimp.build_graph("kubesched", cache_dir=None)


@pytest.mark.parametrize(
    "package", ["kubesched.framework.preemption", "kubesched.plugins.defaultpreemption"]
)
def test_no_module_of_the_package_is_on_an_import_cycle(
    graph: grimp.ImportGraph, package: str
) -> None:
    cycles = []
    for module in sorted({package} | graph.find_descendants(package)):
        for imported in sorted(graph.find_modules_directly_imported_by(module)):
            back = graph.find_shortest_chain(importer=imported, imported=module)
            if back is not None:
                cycles.append((module, *back))
    assert cycles == []
