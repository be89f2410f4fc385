"""PrioritySort: the default QueueSort plugin (upstream queuesort/priority_sort.go).

The scheduling queue's activeQ heap calls ``less(a, b)`` to order pods: higher
priority first; among equal priorities, the pod that entered the queue earlier
(``timestamp``, refreshed on every re-add after a failed attempt) first.
"""

from __future__ import annotations

from typing import Final

from kubesched.framework.config import PluginArgs
from kubesched.framework.interfaces import Handle, QueuedInfo

NAME: Final = "PrioritySort"


class PrioritySort:
    """QueueSort plugin; takes no args."""

    name = NAME

    def __init__(self, args: PluginArgs | None, handle: Handle) -> None:
        del args, handle  # stateless

    def less(self, a: QueuedInfo, b: QueuedInfo) -> bool:
        """True if ``a`` pops before ``b`` (ties False both ways, as
        ``Timestamp.Before``)."""
        p1 = a.pod.priority
        p2 = b.pod.priority
        return p1 > p2 or (p1 == p2 and a.timestamp < b.timestamp)
