"""DefaultPreemption (upstream pkg/scheduler/framework/plugins/defaultpreemption)."""

from kubesched.plugins.defaultpreemption.plugin import (
    DEFAULT_VICTIM_ORDER,
    NAME,
    DefaultPreemption,
    filter_pods_with_pdb_violation,
    pod_terminating_by_preemption,
)

__all__ = [
    "DEFAULT_VICTIM_ORDER",
    "NAME",
    "DefaultPreemption",
    "filter_pods_with_pdb_violation",
    "pod_terminating_by_preemption",
]
