"""PodTopologySpread (upstream pkg/scheduler/framework/plugins/podtopologyspread, v1.36).

Modules: ``common`` (constraints, selectors, default constraints, node
inclusion), ``filtering`` (PreFilter state, AddPod/RemovePod, per-node
Filter), ``scoring`` (PreScore state, per-node Score, NormalizeScore),
``podcounts`` (per-node matching-pod counts kept from the table's change
log), ``vector`` (the whole-table forms), ``hints`` (events and queueing
hints), ``plugin`` (the plugin class).
"""

from kubesched.plugins.podtopologyspread.common import (
    ERR_REASON_CONSTRAINTS_NOT_MATCH,
    ERR_REASON_NODE_LABEL_NOT_MATCH,
    SYSTEM_DEFAULT_CONSTRAINTS,
)
from kubesched.plugins.podtopologyspread.plugin import PodTopologySpread

__all__ = [
    "ERR_REASON_CONSTRAINTS_NOT_MATCH",
    "ERR_REASON_NODE_LABEL_NOT_MATCH",
    "SYSTEM_DEFAULT_CONSTRAINTS",
    "PodTopologySpread",
]
