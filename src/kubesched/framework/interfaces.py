"""One Protocol per extension point, the Handle plugins receive, and the vectorised forms.

A plugin has a ``name`` (upstream's plugin name) and implements any subset of
these ``runtime_checkable`` Protocols; the runtime finds which with ``isinstance``
(once per framework) and never looks plugins up by name. ``filter`` / ``score``
are the per-node contract, shaped as upstream's; the vectorised forms
(``VectorFilterPlugin`` ...) give the same decisions for many nodes at once and
are used only when every plugin of the point offers one.

Legal status codes (as upstream):
- PreEnqueue: Success, Unschedulable / UnschedulableAndUnresolvable (gated).
- PreFilter: Success, Skip, Unschedulable, UnschedulableAndUnresolvable, Error.
- Filter: Success, Unschedulable, UnschedulableAndUnresolvable, Error.
- PostFilter: Success (with a result), Unschedulable, UnschedulableAndUnresolvable, Error.
- PreScore: Success, Skip, Error.  Score / NormalizeScore: Success, Error.
- Reserve / PreBind / Bind: Success, Error (Bind may return Skip).  Permit: Success, Wait,
  Unschedulable, Error.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from kubesched.api.types import Pod, PodDisruptionBudget
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.events import ClusterEventWithHint
from kubesched.framework.nodetable import IntArray, NodeTable
from kubesched.framework.nominated import NominatedLoadIndex
from kubesched.framework.ports import (
    Clock,
    ClusterReader,
    ClusterWriter,
    EventRecorder,
    MetricsRecorder,
)
from kubesched.framework.results import NodeScore, NodeToStatus, PostFilterResult, PreFilterResult
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo, PodInfo

# --------------------------------------------------------------------------- vector forms


@dataclass(slots=True)
class Verdicts:
    """A vector Filter result: ``index[row] == -1`` passes, else the row's Status is
    ``statuses[index[row]]``. ``index`` may be shared and read-only (never write
    to it); empty ``statuses``: every row passes."""

    index: npt.NDArray[np.int32]
    statuses: Sequence[Status]

    @staticmethod
    def all_pass(n: int) -> Verdicts:
        """Every row passes (the index is a shared read-only array)."""
        return Verdicts(pass_index(n), ())


_PASS_INDEX: list[npt.NDArray[np.int32]] = [np.full(0, -1, dtype=np.int32)]


def pass_index(n: int) -> npt.NDArray[np.int32]:
    """A read-only int32 array of ``n`` times -1 (a view of a shared buffer)."""
    buf = _PASS_INDEX[0]
    if len(buf) < n:
        buf = np.full(max(n, 2 * len(buf)), -1, dtype=np.int32)
        buf.setflags(write=False)
        _PASS_INDEX[0] = buf
    return buf[:n]


class NodeSet:
    """The nodes handed to PreScore/Score: table rows in order, with their NodeInfos."""

    __slots__ = ("_infos", "rows", "table")

    def __init__(
        self, table: NodeTable, rows: IntArray, infos: list[NodeInfo] | None = None
    ) -> None:
        self.table = table
        self.rows = rows
        self._infos = infos

    @property
    def infos(self) -> list[NodeInfo]:
        if self._infos is None:
            t = self.table.infos
            self._infos = [i for i in (t[r] for r in self.rows.tolist()) if i is not None]
        return self._infos

    def __len__(self) -> int:
        return len(self.rows)


# --------------------------------------------------------------------------- handle


class Nominator(Protocol):
    """Pods nominated to run on nodes (upstream ``fwk.PodNominator``)."""

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        """Pods nominated to run on this node, in nomination order."""
        ...

    def nominated_node_names(self) -> list[str]:
        """Nodes that currently have at least one nominated pod."""
        ...

    def load_index(self) -> NominatedLoadIndex:
        """The nominated pods' summed requests over table rows (the same object on
        every call)."""
        ...


PollCheck = Callable[[], tuple[bool, str | None]]
"""A condition of ``Handle.poll_until``: (done, the error ending the wait or None)."""


class Handle(Protocol):
    """What a plugin may use of the scheduler (upstream framework.Handle)."""

    @property
    def table(self) -> NodeTable:
        """The cycle's snapshot of all nodes (read-only for plugins)."""
        ...

    @property
    def nominator(self) -> Nominator: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def rng(self) -> random.Random:
        """The seeded random source of this scheduler."""
        ...

    @property
    def reader(self) -> ClusterReader: ...

    @property
    def writer(self) -> ClusterWriter: ...

    @property
    def recorder(self) -> EventRecorder: ...

    @property
    def metrics(self) -> MetricsRecorder: ...

    @property
    def scheduler_name(self) -> str: ...

    @property
    def per_node(self) -> bool:
        """Run only per-node code (``--exact`` / ``--per-node``): no vectorised form
        or state is used; decisions are the same either way."""
        ...

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node: NodeInfo
    ) -> Status: ...

    def what_if_supported(self, state: CycleState, pod: PodInfo) -> bool: ...

    def run_filter_what_if(
        self, state: CycleState, pod: PodInfo, rows: IntArray, requested: IntArray
    ) -> tuple[npt.NDArray[np.int32], list[Status]] | None: ...

    def run_filter_what_if_row(
        self, state: CycleState, pod: PodInfo, row: int, requested: IntArray
    ) -> Status | None: ...

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo
    ) -> Status: ...

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo
    ) -> Status: ...

    def activate(self, pods: Sequence[Pod]) -> None:
        """Move these pods to activeQ (upstream PodActivator)."""
        ...

    def run_async(self, work: Callable[[], Status], done: Callable[[Status], None]) -> None:
        """Work upstream does in a goroutine (the async preemption's API calls):
        the simulator runs ``work`` and then ``done`` at once; live mode runs
        ``work`` on another thread and ``done`` later on the scheduling thread."""
        ...

    def poll_until(self, check: PollCheck, interval: float, timeout: float) -> str | None:
        """``wait.PollUntilContextTimeout`` from a binding cycle (PreBind): call
        ``check`` (on the scheduling thread, so it may read the caches) every
        ``interval`` seconds until it answers done or an error, at most
        ``timeout`` seconds. None once done, else the error's text: the check's,
        ``context deadline exceeded``, or ``context canceled`` when the scheduler
        stops. The simulator's state is final at once: it checks once, and a
        pending answer is the deadline."""
        ...

    def pdbs(self) -> Sequence[PodDisruptionBudget]: ...


# --------------------------------------------------------------------------- extension points


@runtime_checkable
class Plugin(Protocol):
    name: str


@runtime_checkable
class PreEnqueuePlugin(Plugin, Protocol):
    def pre_enqueue(self, pod: Pod) -> Status: ...


class QueuedInfo(Protocol):
    @property
    def pod(self) -> Pod: ...

    @property
    def timestamp(self) -> int: ...


@runtime_checkable
class QueueSortPlugin(Plugin, Protocol):
    def less(self, a: QueuedInfo, b: QueuedInfo) -> bool: ...


@runtime_checkable
class EnqueueExtensions(Plugin, Protocol):
    def events_to_register(self) -> list[ClusterEventWithHint]: ...


@runtime_checkable
class PreFilterExtensions(Protocol):
    def add_pod(
        self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo
    ) -> Status: ...

    def remove_pod(
        self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo
    ) -> Status: ...


@runtime_checkable
class PreFilterPlugin(Plugin, Protocol):
    def pre_filter(
        self, state: CycleState, pod: PodInfo, nodes: NodeTable
    ) -> tuple[PreFilterResult | None, Status]: ...

    def pre_filter_extensions(self) -> PreFilterExtensions | None: ...


@runtime_checkable
class FilterPlugin(Plugin, Protocol):
    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status: ...


@runtime_checkable
class VectorFilterPlugin(FilterPlugin, Protocol):
    def filter_vector(self, state: CycleState, pod: PodInfo, table: NodeTable) -> Verdicts | None:
        """Filter every row of ``table`` at once; ``None`` = not vectorisable for this
        pod (the runtime then uses ``filter`` per node)."""
        ...


@runtime_checkable
class RowFilterPlugin(VectorFilterPlugin, Protocol):
    def filter_rows(
        self, state: CycleState, pod: PodInfo, table: NodeTable, rows: IntArray
    ) -> Verdicts | None:
        """``filter_vector`` for some rows only (``index[i]`` is ``rows[i]``'s verdict),
        so the chunked scan does not evaluate the whole table; ``None`` as there."""
        ...


@runtime_checkable
class PostFilterPlugin(Plugin, Protocol):
    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]: ...


@runtime_checkable
class PreScorePlugin(Plugin, Protocol):
    def pre_score(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> Status: ...


@runtime_checkable
class ScoreExtensions(Protocol):
    def normalize_score(
        self, state: CycleState, pod: PodInfo, scores: list[NodeScore]
    ) -> Status: ...


@runtime_checkable
class ScorePlugin(Plugin, Protocol):
    def score(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> tuple[int, Status]: ...

    def score_extensions(self) -> ScoreExtensions | None: ...


@runtime_checkable
class VectorScorePlugin(ScorePlugin, Protocol):
    def score_vector(self, state: CycleState, pod: PodInfo, nodes: NodeSet) -> IntArray | None:
        """Scores of ``nodes`` (already normalised if the plugin normalises);
        ``None`` = use the per-node path for this pod."""
        ...


@runtime_checkable
class SlotScorePlugin(VectorScorePlugin, Protocol):
    def score_slots(self, state: CycleState, pod: PodInfo, table: NodeTable) -> IntArray | None:
        """Final scores of every table slot when a node's score depends on that node
        alone (no normalisation); None = use ``score_vector``. The runtime keeps
        weighted totals per slot across cycles. Contract: live slots equal
        ``score_vector`` and lie in [MIN_NODE_SCORE, MAX_NODE_SCORE]; the same
        array object comes back while only rows change, a slot changing only with
        a logged change of its row (``NodeTable.rows_changed_since``), any other
        change bringing a new array; only the plugin writes to it."""
        ...


@runtime_checkable
class ReservePlugin(Plugin, Protocol):
    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status: ...

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None: ...


@runtime_checkable
class PermitPlugin(Plugin, Protocol):
    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status, float]: ...


@runtime_checkable
class PreBindPlugin(Plugin, Protocol):
    def pre_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status: ...


@runtime_checkable
class BindPlugin(Plugin, Protocol):
    def bind(self, state: CycleState, pod: PodInfo, node_name: str) -> Status: ...


@runtime_checkable
class PostBindPlugin(Plugin, Protocol):
    def post_bind(self, state: CycleState, pod: PodInfo, node_name: str) -> None: ...


@runtime_checkable
class WhatIfFilterPlugin(FilterPlugin, Protocol):
    """A filter whose answer depends on a node's pods through their summed requests
    alone (NodeResourcesFit), so it can answer for given sums (preemption's dry run)."""

    def filter_what_if(
        self, state: CycleState, pod: PodInfo, rows: IntArray, requested: IntArray
    ) -> Verdicts | None:
        """Verdicts aligned with ``rows`` if ``requested[i]`` (table resource axis)
        were ``rows[i]``'s requests; ``None`` = cannot answer for this pod."""
        ...


@runtime_checkable
class WhatIfRowFilterPlugin(WhatIfFilterPlugin, Protocol):
    """A what-if filter that can answer for one row with Python scalars."""

    def filter_what_if_row(
        self, state: CycleState, pod: PodInfo, row: int, requested: list[int]
    ) -> Status | None:
        """``filter_what_if`` for one row as a Status; ``None`` = ask ``filter_what_if``."""
        ...


@runtime_checkable
class StaticFilterPlugin(VectorFilterPlugin, Protocol):
    """A filter whose verdict never depends on the node's pods (DynamicResources), so
    the what-if runners and the dry run reuse its ``filter_vector``. (A
    ``DerivedFilterPlugin`` is static when its ``Reads`` say so.)"""

    @property
    def static_filter(self) -> bool:
        """The declaration (plugins set the class attribute ``static_filter = True``)."""
        ...


@runtime_checkable
class SpecDeterminedFilterPlugin(FilterPlugin, Protocol):
    """A filter whose verdict is a function of the pod's spec (``PodInfo.facts``), the
    args, the node's own state (``NodeTable.node_generation``) and, for a what-if
    filter, the summed requests: nothing else. When every active filter declares
    it, what-if answers are reused across cycles for pods of the same spec."""

    @property
    def spec_determined_filter(self) -> bool:
        """The declaration (class attribute ``spec_determined_filter = True``)."""
        ...


def is_spec_determined_filter(plugin: object) -> bool:
    """Does ``plugin`` declare ``SpecDeterminedFilterPlugin``? (Resolve once.)"""
    return isinstance(plugin, SpecDeterminedFilterPlugin) and plugin.spec_determined_filter
