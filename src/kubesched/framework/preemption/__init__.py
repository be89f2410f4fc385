"""PostFilter preemption shared by preemption plugins (upstream pkg/scheduler/framework/preemption).

Modules, in dependency order (each imports only those before it):

- ``victims``: a candidate's ``Victims`` and ``victim_stats``, what the
  default criteria of pickOneNodeForPreemption read (``StatColumns``);
- ``policy``: the ``PreemptionPolicy`` a plugin supplies, and ``VictimOrder``,
  DefaultPreemption's victim selection as data;
- ``batch``: the batched dry run's answers for a batch of rows;
- ``candidates``: ``Candidate``, the bounded candidate lists and the dry run's
  stop rule (``DryRun``), the pick;
- ``executor``: acting on the chosen candidate (DisruptionTarget, delete,
  clearing nominations; the async preemption bookkeeping);
- ``victim_cache``, ``dry_run``: the batched dry run (SelectVictimsOnNode for
  many nodes at once, with a per-row store);
- ``outcome``: ``PreemptionOutcome``, what one Preempt call saw and chose (for
  explanations);
- ``evaluator``: the ``Evaluator`` running the flow (R5.1-R5.10).

Contract: whatever path answers (node by node through the policy, or in
batches when the policy gives a ``VictimOrder``), the candidates, the chosen
node, its victims and the random draws are those of the node-by-node path.
"""

from kubesched.framework.preemption.candidates import Candidate, CandidateList, CandidateSet
from kubesched.framework.preemption.evaluator import (
    MSG_NO_CANDIDATE,
    MSG_NO_NODES,
    MSG_NOT_HELPFUL,
    MSG_WAITING,
    Evaluator,
)
from kubesched.framework.preemption.executor import (
    DISRUPTION_TARGET,
    REASON_PREEMPTION_BY_SCHEDULER,
    Executor,
)
from kubesched.framework.preemption.outcome import PreemptionOutcome
from kubesched.framework.preemption.policy import (
    MSG_NO_VICTIMS,
    PreemptionPolicy,
    VictimOrder,
)
from kubesched.framework.preemption.victims import StatColumns, Victims

__all__ = [
    "DISRUPTION_TARGET",
    "MSG_NOT_HELPFUL",
    "MSG_NO_CANDIDATE",
    "MSG_NO_NODES",
    "MSG_NO_VICTIMS",
    "MSG_WAITING",
    "REASON_PREEMPTION_BY_SCHEDULER",
    "Candidate",
    "CandidateList",
    "CandidateSet",
    "Evaluator",
    "Executor",
    "PreemptionOutcome",
    "PreemptionPolicy",
    "StatColumns",
    "VictimOrder",
    "Victims",
]
