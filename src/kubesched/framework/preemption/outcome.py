"""``PreemptionOutcome``: what one Preempt call saw and chose, for explanations
(``PostFilterResult.explanation``; kubesched.explain reads it). Filled as the
flow runs; nothing in the decision reads it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kubesched.api.types import PodDisruptionBudget
from kubesched.framework.preemption.candidates import Candidate, CandidateSet
from kubesched.framework.preemption.policy import VictimOrder
from kubesched.framework.results import NodeToStatus
from kubesched.framework.types import PodInfo


@dataclass(slots=True)
class PreemptionOutcome:
    candidate_set: CandidateSet | None = None
    """The dry run's candidates (None: it did not run)."""
    statuses: NodeToStatus | None = None
    """Why the visited nodes that are not candidates were rejected."""
    offset: int = 0
    num_candidates: int = 0
    """Where the dry run started among the potential nodes, and how many
    candidates it looked for (upstream GetOffsetAndNumCandidates)."""
    pdbs: Sequence[PodDisruptionBudget] = ()
    order: VictimOrder | None = None
    """The PDBs the dry run saw and the policy's victim order (None: the policy
    selects victims its own way)."""
    chosen: Candidate | None = None
    chosen_pods: list[PodInfo] = field(default_factory=list)
    """The pods on the chosen node when it was chosen (before any eviction)."""

    @property
    def candidates(self) -> list[Candidate]:
        cs = self.candidate_set
        return cs.materialize() if cs is not None else []
