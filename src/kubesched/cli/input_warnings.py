"""The lines ``simulate`` prints on stderr about what the input left out.

One line each, after the ``ignored N objects: ...`` summary and before the run
(docs/simulate-interface.md):

- ``warning: 3 objects that can change scheduling are not modelled: 2 LimitRange,
  1 ResourceQuota`` (``kubesched.api.unmodelled``);
- ``warning: skipped 2 objects with resource claims (dynamic resource allocation
  is not modelled): pod default/a, deployment default/d``;
- ``warning: no Node in the input: every pod stays Pending`` (an all-Pending run
  is a legitimate what-if, so not an error).
"""

from __future__ import annotations

from typing import Final

from kubesched.api.types import Node
from kubesched.api.unmodelled import unmodelled_summary
from kubesched.sim.scenario import Scenario

MAX_NAMED: Final = 5
NO_NODES: Final = "no Node in the input: every pod stays Pending"


def skipped_claims_line(labels: list[str]) -> str:
    """The objects skipped for their resource claims, the first few by name."""
    if not labels:
        return ""
    shown = ", ".join(labels[:MAX_NAMED])
    more = f", and {len(labels) - MAX_NAMED} more" if len(labels) > MAX_NAMED else ""
    noun = "object" if len(labels) == 1 else "objects"
    return (
        f"skipped {len(labels)} {noun} with resource claims "
        f"(dynamic resource allocation is not modelled): {shown}{more}"
    )


def warning_lines(scenario: Scenario) -> list[str]:
    """The warning lines for ``scenario``, without the ``warning: `` prefix."""
    lines = [unmodelled_summary(scenario.unmodelled), skipped_claims_line(scenario.skipped_claims)]
    if not any(isinstance(item.obj, Node) for item in scenario.items):
        lines.append(NO_NODES)
    return [line for line in lines if line]
