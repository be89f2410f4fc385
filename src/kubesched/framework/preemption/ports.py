"""What the batched dry run uses of the runtime beyond ``Handle``, as explicit Protocols.

The runtime ``Framework`` (the only ``Handle`` there is), the scheduler's
nominator and NodeResourcesFit offer a few more methods than the framework's
Protocols declare; the batched dry run uses them when present and otherwise
takes a slower, equal path. They are declared here rather than probed by name,
and resolved once per Evaluator (``HandleExtras.of``): ``isinstance`` on a
``runtime_checkable`` Protocol costs tens of microseconds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import FilterPlugin, Handle
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.types import PodInfo


@runtime_checkable
class WhatIfRuntime(Protocol):
    """The runtime's view of its filters (``runtime.framework.Framework``)."""

    @property
    def filter_plugins(self) -> Sequence[FilterPlugin]:
        """Every Filter plugin of the profile, in order."""
        ...

    def what_if_spec_determined(self, state: CycleState) -> bool:
        """``Handle.run_filter_what_if``'s answers for this cycle are a function of
        the pod's spec, the skipped plugins, the nodes' own state and the rows and
        requests asked about alone (they may be kept across dry runs)."""
        ...


@runtime_checkable
class DenseNominatedLoad(Protocol):
    """A nominator that keeps the nominated pods' summed requests over table rows."""

    def nominated_load_dense(self, pod: PodInfo, table: NodeTable) -> IntArray | None:
        """``Nominator.nominated_load`` as a (capacity, width) matrix over table rows
        (None: no pod counts); read-only."""
        ...


@runtime_checkable
class WhatIfColumnsFilter(Protocol):
    """A filter whose what-if verdict is ``allocatable - requested >= need`` on some
    resource columns (NodeResourcesFit)."""

    def what_if_columns(self, state: CycleState, pod: PodInfo) -> tuple[IntArray, IntArray] | None:
        """``(cols, need)`` for this pod (None: it cannot say)."""
        ...


AskColumns = Callable[[CycleState, PodInfo], tuple[IntArray, IntArray] | None]
"""``WhatIfColumnsFilter.what_if_columns`` of the only active filter that depends
on a node's pods."""


@dataclass(frozen=True, slots=True)
class HandleExtras:
    """The extras a handle offers (None: it does not)."""

    runtime: WhatIfRuntime | None
    dense_load: DenseNominatedLoad | None

    @staticmethod
    def of(handle: Handle) -> HandleExtras:
        """Resolve the extras of ``handle`` (its nominator is fixed, as are its
        filters once the profile is built: call it after construction)."""
        nominator = handle.nominator
        return HandleExtras(
            handle if isinstance(handle, WhatIfRuntime) else None,
            nominator if isinstance(nominator, DenseNominatedLoad) else None,
        )
