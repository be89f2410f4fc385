"""What a preemption plugin decides: the policy Protocol and the victim order as data.

Upstream preemption ``Interface`` and DefaultPreemption's ``IsEligiblePod`` /
``MoreImportantPod`` fields, as data (``VictimOrder``) that the per-node
``SelectVictimsOnNode`` and the batched dry run both read; ``None`` hooks mean
upstream's defaults.
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
    """SelectVictimsOnNode's victims: lower-priority pods ``is_eligible_pod`` allows
    (None: all), most important first by ``more_important_pod`` (None: priority,
    then earlier start, unset = now), split by the plugin's ``pdb_split``;
    candidates scored by ``ordered_score_funcs`` (None: the default criteria)."""

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
        """Sort key for "most important first" (a plain key for the default order)."""
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
        """The data DefaultPreemption's algorithm follows (batched dry run); None when
        the policy selects victims its own way."""
        ...
