"""What the batched dry run uses of the runtime beyond ``Handle``, as explicit Protocols.

The runtime ``Framework`` (the only ``Handle`` there is) offers a few more
methods than the framework's Protocols declare; the batched dry run uses them
when present and otherwise takes a slower, equal path. They are declared here
rather than probed by name, and resolved once per Evaluator
(``HandleExtras.of``): ``isinstance`` on a ``runtime_checkable`` Protocol costs
tens of microseconds. (A resource filter's evaluator is reached through
``framework.resources.ResourceFilterPlugin``, the nominated load through
``Nominator.load_index()``.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import FilterPlugin, Handle
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


@dataclass(frozen=True, slots=True)
class HandleExtras:
    """The extras a handle offers (None: it does not)."""

    runtime: WhatIfRuntime | None

    @staticmethod
    def of(handle: Handle) -> HandleExtras:
        """Resolve the extras of ``handle`` (its filters are fixed once the
        profile is built: call it after construction)."""
        return HandleExtras(handle if isinstance(handle, WhatIfRuntime) else None)
