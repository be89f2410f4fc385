"""The noderesources plugins: NodeResourcesFit and NodeResourcesBalancedAllocation.

Modules: ``fit`` (the Fit plugin), ``fit_plan`` (its Filter declared as a
``ResourcePlan``, evaluated by ``framework.resources``), ``fit_hints`` (events
and queueing hints), ``resource_allocation`` (the amounts scorers read),
``least_allocated`` / ``most_allocated`` /
``requested_to_capacity_ratio`` (Fit's scoring strategies),
``balanced_allocation`` (the BalancedAllocation plugin), ``validation``.
"""

from kubesched.plugins.noderesources.balanced_allocation import NAME as BALANCED_ALLOCATION_NAME
from kubesched.plugins.noderesources.balanced_allocation import BalancedAllocation
from kubesched.plugins.noderesources.fit import NAME as FIT_NAME
from kubesched.plugins.noderesources.fit import Fit
from kubesched.plugins.noderesources.fit_plan import (
    REASON_INSUFFICIENT_CPU,
    REASON_INSUFFICIENT_EPHEMERAL_STORAGE,
    REASON_INSUFFICIENT_MEMORY,
    REASON_TOO_MANY_PODS,
    insufficient_reason,
)

__all__ = [
    "BALANCED_ALLOCATION_NAME",
    "FIT_NAME",
    "REASON_INSUFFICIENT_CPU",
    "REASON_INSUFFICIENT_EPHEMERAL_STORAGE",
    "REASON_INSUFFICIENT_MEMORY",
    "REASON_TOO_MANY_PODS",
    "BalancedAllocation",
    "Fit",
    "insufficient_reason",
]
