"""The figures that compare runs: one flat mapping per SimulationResult.

``run_metrics(doc)`` gives, in this order (names are ``--assert`` quantities
where one exists, so a gate and a comparison read the same number):

- ``pods``, ``scheduled``, ``pending``, ``preempted``, ``preemptions``: as the
  ``--assert`` quantities of the same names (``kubesched.driver.gates``);
- ``victims``: pods named as victims over all preemptions;
- ``delay.p50``, ``delay.p99``: scheduling delay of the bound pods, seconds,
  nearest-rank (as ``--assert``);
- ``utilisation.R`` (``cpu``, ``memory``, then other resources such as
  ``nvidia.com/gpu`` and ``pods``): percent of the nodes' allocatable that the
  pods on them request at the end (only when the document has ``nodes``, as
  ``--show nodes`` adds them);
- per priority class ``C`` (``""`` for pods without one):
  ``scheduled(class=C)`` and ``pending(class=C)``.

Values are numbers (int counts, float seconds and percents), so a sweep can
average them and a table can print them.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Final

from kubesched.api.quantity import parse_quantity
from kubesched.driver.gates import Filter, quantity

RESOURCES: Final = ("cpu", "memory")
COUNTED: Final = ("pods", "scheduled", "pending", "preempted", "preemptions")


def run_metrics(doc: dict[str, Any]) -> dict[str, float]:
    """The comparison figures of one SimulationResult document (see the module)."""
    out: dict[str, float] = {}
    for name in COUNTED:
        out[name] = int(quantity(doc, name)[0])
    out["victims"] = sum(len(p["victims"]) for p in doc["preemptions"])
    for name in ("delay.p50", "delay.p99"):
        out[name] = quantity(doc, name)[0]
    out.update(utilisation(doc))
    for cls in classes(doc):
        only = (Filter("class", "==", cls),)
        for name in ("scheduled", "pending"):
            out[f"{name}(class={cls})"] = int(quantity(doc, name, only)[0])
    return out


def classes(doc: dict[str, Any]) -> list[str]:
    """The priority classes of ``doc``'s pods, sorted, ``""`` (no class) last."""
    names = {p["priorityClassName"] or "" for p in doc["pods"]}
    return sorted(names, key=lambda c: (c == "", c))


def utilisation(doc: dict[str, Any]) -> dict[str, float]:
    """``utilisation.R`` for every resource R the nodes have and the pods on them
    request (cpu and memory first, then by name; ``pods`` counts pods): the nodes'
    ``requested`` over their ``allocatable``, in percent; empty without ``nodes``."""
    total: dict[str, float] = defaultdict(float)
    used: dict[str, float] = defaultdict(float)
    for n in doc.get("nodes") or ():
        for r, v in n["allocatable"].items():
            total[r] += float(parse_quantity(v))
        for r, v in n["requested"].items():
            used[r] += float(parse_quantity(v))
    names = sorted((r for r in total if total[r] and r in used), key=resource_order)
    return {f"utilisation.{r}": 100.0 * used[r] / total[r] for r in names}


def resource_order(name: str) -> tuple[int, str]:
    """cpu, memory, then the other resources by name."""
    return (RESOURCES.index(name) if name in RESOURCES else len(RESOURCES), name)
