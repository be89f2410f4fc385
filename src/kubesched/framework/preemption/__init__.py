"""PostFilter preemption shared by preemption plugins (upstream pkg/scheduler/framework/preemption).

Modules in dependency order: ``victims`` (``Victims``, ``victim_stats``),
``policy`` (``PreemptionPolicy``, ``VictimOrder``), ``batch``, ``candidates``
(lists, stop rule, pick), ``executor`` (acting on the choice), ``victim_cache`` /
``dry_run`` (the batched dry run), ``outcome`` (for explanations), ``evaluator``
(the flow, R5.1-R5.10).

Contract: batched or node by node, the candidates, chosen node, victims and
random draws are those of the node-by-node path.
"""

from kubesched.framework.preemption.candidates import Candidate, CandidateList, CandidateSet
from kubesched.framework.preemption.evaluator import (
    MSG_NO_CANDIDATE,
    MSG_NO_NODES,
    MSG_NOT_HELPFUL,
    MSG_WAITING,
    Evaluator,
)
from kubesched.framework.preemption.executor import Executor
from kubesched.framework.preemption.outcome import PreemptionOutcome
from kubesched.framework.preemption.policy import (
    MSG_NO_VICTIMS,
    PreemptionPolicy,
    VictimOrder,
)
from kubesched.framework.preemption.victims import StatColumns, Victims

__all__ = [
    "MSG_NOT_HELPFUL",
    "MSG_NO_CANDIDATE",
    "MSG_NO_NODES",
    "MSG_NO_VICTIMS",
    "MSG_WAITING",
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
