"""What a preemption plugin decides: the policy Protocol and the victim order as data.

Upstream: pkg/scheduler/framework/preemption ``Interface`` (the policy the
Evaluator runs) and DefaultPreemption's ``IsEligiblePod`` / ``MoreImportantPod``
function fields, which custom builds replace. ``VictimOrder`` carries those
hooks as data: the per-node ``SelectVictimsOnNode`` of DefaultPreemption and
the batched dry run (``dry_run.py``) both read it, so they cannot disagree, and
the batched dry run knows from the data alone (no look at the plugin's class)
when its fast forms apply: ``None`` hooks mean upstream's defaults.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Final, Protocol

from kubesched.api.types import PodDisruptionBudget, Time
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.preemption.victims import Victims
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo, PodInfo

MSG_NO_VICTIMS: Final = "No preemption victims found for incoming pod"

EligibleFunc = Callable[[NodeInfo, PodInfo, PodInfo], bool]
"""upstream IsEligiblePodFunc: (node, victim, preemptor) -> may the victim go (on
top of its strictly lower priority)."""

MoreImportantFunc = Callable[[PodInfo, PodInfo, Time], bool]
"""upstream MoreImportantPodFunc: (a, b, now) -> a is more important than b
(``now`` stands in for an unset start time)."""

ScoreFuncs = Callable[[dict[str, Victims]], list[Callable[[str], int]]]
"""upstream OrderedScoreFuncs: candidates' victims -> score functions (higher wins)."""

PdbSplit = Callable[
    [Sequence[PodInfo], Sequence[PodDisruptionBudget]], tuple[list[PodInfo], list[PodInfo]]
]
"""upstream filterPodsWithPDBViolation: pods in order -> (violating, non-violating)."""


@dataclass(frozen=True, slots=True)
class VictimOrder:
    """How DefaultPreemption's SelectVictimsOnNode chooses victims on a node and how
    candidates are scored, as data.

    Victims are the pods of strictly lower priority that ``is_eligible_pod``
    allows (None: all of them), sorted most important first by
    ``more_important_pod`` (None: higher priority, then earlier start time with
    an unset one counting as now), split by ``pdb_split`` and reprieved
    PDB-violating first; candidates are scored by ``ordered_score_funcs`` (None:
    the five default criteria). ``pdb_split`` is passed in because it is the
    plugin's (the framework does not import plugins)."""

    pdb_split: PdbSplit
    is_eligible_pod: EligibleFunc | None = None
    more_important_pod: MoreImportantFunc | None = None
    ordered_score_funcs: ScoreFuncs | None = None

    @property
    def default_policy(self) -> bool:
        """Default eligibility and importance order: victims are exactly the pods of
        lower priority, sorted by priority then start time."""
        return self.is_eligible_pod is None and self.more_important_pod is None

    @property
    def default_order(self) -> bool:
        """The default importance order and the default criteria: a candidate's
        ``victim_stats`` columns (priority-sorted victims) decide the pick."""
        return self.more_important_pod is None and self.ordered_score_funcs is None

    def allows(self, node: NodeInfo, victim: PodInfo, preemptor: PodInfo) -> bool:
        """upstream isPreemptionAllowed: strictly lower priority, then IsEligiblePod."""
        if victim.pod.priority >= preemptor.pod.priority:
            return False
        eligible = self.is_eligible_pod
        return eligible is None or eligible(node, victim, preemptor)

    def sort_key(self, now: Time) -> Callable[[PodInfo], Any]:
        """Sort key for "most important first": a plain key for the default order
        (the same order as its comparator: Python's sort is stable and makes the
        same comparisons), else the comparator of ``more_important_pod``."""
        more = self.more_important_pod
        if more is None:

            def key(p: PodInfo) -> tuple[int, int]:
                t = p.pod.start_time
                return (-p.pod.priority, now if t is None else t)

            return key

        def cmp(a: PodInfo, b: PodInfo) -> int:
            if more(a, b, now):
                return -1
            if more(b, a, now):
                return 1
            return 0

        return functools.cmp_to_key(cmp)


class PreemptionPolicy(Protocol):
    """What a preemption plugin decides (upstream preemption.Interface)."""

    def pod_eligible_to_preempt_others(
        self, pod: PodInfo, nominated_node_status: Status | None
    ) -> tuple[bool, str]: ...

    def select_victims_on_node(
        self,
        state: CycleState,
        pod: PodInfo,
        node: NodeInfo,
        pdbs: Sequence[PodDisruptionBudget],
    ) -> tuple[list[PodInfo], int, Status]: ...

    def offset_and_num_candidates(self, num_nodes: int) -> tuple[int, int]: ...

    def ordered_score_funcs(
        self, victims: dict[str, Victims]
    ) -> list[Callable[[str], int]] | None: ...

    def victim_order(self) -> VictimOrder | None:
        """The data ``select_victims_on_node`` and ``ordered_score_funcs`` follow,
        when they are DefaultPreemption's algorithm (the Evaluator may then
        answer the dry run for batches of nodes, ``dry_run.py``); None when the
        policy selects victims its own way (the dry run visits node by node)."""
        ...
