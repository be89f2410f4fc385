"""What the batched dry run uses of the runtime beyond ``Handle``, as an explicit Protocol.

The runtime ``Framework`` (the only ``Handle`` there is) offers a few more
methods than the framework's Protocols declare; the batched dry run runs only
when they are present (else the per-node path runs). They are declared here
rather than probed by name, and checked once per Evaluator: ``isinstance`` on
a ``runtime_checkable`` Protocol costs tens of microseconds. (A resource
filter's evaluator is reached through ``framework.resources.ResourceFilterPlugin``,
the nominated load through ``Nominator.load_index()``.)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import FilterPlugin
from kubesched.framework.types import PodInfo


@runtime_checkable
class WhatIfRuntime(Protocol):
    """The runtime's view of its filters (``runtime.framework.Framework``)."""

    @property
    def filter_plugins(self) -> Sequence[FilterPlugin]:
        """Every Filter plugin of the profile, in order."""
        ...

    def static_filters(self, state: CycleState, pod: PodInfo) -> frozenset[str]:
        """The active filters whose verdicts for this cycle hold whatever pods the
        nodes hold (they need no asking in a dry run)."""
        ...

    def what_if_spec_determined(self, state: CycleState, pod: PodInfo) -> bool:
        """``Handle.run_filter_what_if``'s answers for this cycle are a function of
        the pod's spec, the skipped plugins, the nodes' own state and the rows and
        requests asked about alone (they may be kept across dry runs)."""
        ...
