"""The test doubles of the scheduler's ports, one of each, shared by every test.

- ``FakeClock``: a ``Clock`` whose time the test sets (``t``, ``step``, ``set``).
- ``FakeReader``: a ``ClusterReader`` over a dict of pods keyed ``namespace/name``,
  no PDBs, no namespaces, and a ``FakeStorage``.
- ``RecordingWriter``: a ``ClusterWriter`` that records every call (pod keys),
  then forwards it to ``delegate`` if one is given; ``bind_error`` makes ``bind``
  raise (an API failure).
- ``FakeNominator``: pods nominated per node, in nomination order (what the
  queue's nominator resolves to), feeding its ``NominatedLoadIndex`` as every
  nominator does (``nominate`` replaces a pod's earlier nomination, ``delete``
  ends it).
- ``FakeHandle``: the parts of the framework ``Handle`` plugins use: a table, a
  seeded random source, an empty ``FakeNominator``, a ``FakeClock`` at 0, an
  empty ``FakeReader`` and a ``RecordingWriter`` (``writer_impl``); the event
  recorder and the framework's runners raise if a plugin reaches for them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kubesched.api.storage import PersistentVolume, PersistentVolumeClaim
from kubesched.api.types import Namespace, Pod, PodCondition, PodDisruptionBudget, Time
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import Nominator, PollCheck
from kubesched.framework.nodetable import NodeTable
from kubesched.framework.nominated import NominatedLoadIndex
from kubesched.framework.ports import Clock, ClusterReader, ClusterWriter, EventRecorder
from kubesched.framework.status import Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.framework import poll_once, run_now
from tests.storage_fakes import FakeStorage


class FakeClock:
    def __init__(self, t: Time = 0) -> None:
        self.t = t

    def now(self) -> Time:
        return self.t

    def step(self, d: Time) -> None:
        self.t += d

    def set(self, t: Time) -> None:
        self.t = t


class FakeReader:
    """A ClusterReader over a dict of pods keyed ``namespace/name``."""

    def __init__(self, pods: Iterable[Pod] = (), volumes: FakeStorage | None = None) -> None:
        self.pods: dict[str, Pod] = {p.key: p for p in pods}
        self.volumes = volumes if volumes is not None else FakeStorage()

    def get_pod(self, namespace: str, name: str) -> Pod | None:
        return self.pods.get(f"{namespace}/{name}")

    def pdbs(self) -> Sequence[PodDisruptionBudget]:
        return ()

    def namespace(self, name: str) -> Namespace | None:
        return None

    def storage(self) -> FakeStorage:
        return self.volumes


@dataclass(frozen=True, slots=True)
class PatchCall:
    pod: str
    condition: PodCondition | None
    nominated_node_name: str | None


class RecordingWriter:
    """Records every ClusterWriter call, then forwards it to ``delegate`` (if any)."""

    def __init__(self, delegate: ClusterWriter | None = None) -> None:
        self.delegate = delegate
        self.bind_error: Exception | None = None
        """If set, ``bind`` raises it (an API failure) instead of binding."""
        self.binds: list[tuple[str, str]] = []
        self.patches: list[PatchCall] = []
        self.deletes: list[str] = []
        self.volume_writes: list[tuple[str, str]] = []

    def bind(self, pod: Pod, node_name: str) -> None:
        if self.bind_error is not None:
            raise self.bind_error
        self.binds.append((pod.key, node_name))
        if self.delegate is not None:
            self.delegate.bind(pod, node_name)

    def patch_pod_status(
        self,
        pod: Pod,
        *,
        condition: PodCondition | None = None,
        nominated_node_name: str | None = None,
    ) -> None:
        self.patches.append(PatchCall(pod.key, condition, nominated_node_name))
        if self.delegate is not None:
            self.delegate.patch_pod_status(
                pod, condition=condition, nominated_node_name=nominated_node_name
            )

    def delete_pod(self, pod: Pod) -> None:
        self.deletes.append(pod.key)
        if self.delegate is not None:
            self.delegate.delete_pod(pod)

    def update_pv(self, pv: PersistentVolume) -> None:
        self.volume_writes.append(("pv", pv.name))
        if self.delegate is not None:
            self.delegate.update_pv(pv)

    def update_pvc(self, pvc: PersistentVolumeClaim) -> None:
        self.volume_writes.append(("pvc", pvc.key))
        if self.delegate is not None:
            self.delegate.update_pvc(pvc)


class FakeNominator:
    """Pods nominated per node, in nomination order (what the queue's nominator
    resolves to), and the nominated-load index every nominator keeps."""

    def __init__(self, index: NominatedLoadIndex | None = None) -> None:
        self._by_node: dict[str, list[PodInfo]] = {}
        self._index = index if index is not None else NominatedLoadIndex()

    def nominate(self, pod: Pod | PodInfo, node_name: str) -> None:
        """Nominate the pod to ``node_name`` (replacing its earlier nomination)."""
        pi = pod if isinstance(pod, PodInfo) else PodInfo(pod)
        self.delete(pi.pod.uid)
        self._by_node.setdefault(node_name, []).append(pi)
        self._index.add(pi, node_name)

    def delete(self, uid: str) -> None:
        """End the pod's nomination, if any."""
        for pods in self._by_node.values():
            pods[:] = [p for p in pods if p.pod.uid != uid]
        self._index.delete(uid)

    def nominated_pods_for_node(self, node_name: str) -> list[PodInfo]:
        return list(self._by_node.get(node_name, ()))

    def nominated_node_names(self) -> list[str]:
        return [n for n, pods in self._by_node.items() if pods]

    def load_index(self) -> NominatedLoadIndex:
        return self._index


class FakeHandle:
    """The parts of ``Handle`` plugins in these tests use."""

    def __init__(self, table: NodeTable | None = None, seed: int = 4) -> None:
        self._table = table if table is not None else NodeTable()
        self._rng = random.Random(seed)
        self.nominator_impl = FakeNominator()
        self.clock_impl = FakeClock()
        self.reader_impl = FakeReader()
        self.writer_impl = RecordingWriter()
        self.per_node = False
        """``Handle.per_node``: set by tests that run a plugin's per-node path."""

    @property
    def table(self) -> NodeTable:
        return self._table

    @property
    def nominator(self) -> Nominator:
        return self.nominator_impl

    @property
    def clock(self) -> Clock:
        return self.clock_impl

    @property
    def rng(self) -> random.Random:
        return self._rng

    @property
    def reader(self) -> ClusterReader:
        return self.reader_impl

    @property
    def writer(self) -> ClusterWriter:
        return self.writer_impl

    @property
    def recorder(self) -> EventRecorder:
        raise AssertionError("plugin used the event recorder")

    @property
    def scheduler_name(self) -> str:
        return "default-scheduler"

    def run_filter_plugins_with_nominated_pods(
        self, state: CycleState, pod: PodInfo, node: NodeInfo
    ) -> Status:
        raise AssertionError("plugin ran filter plugins")

    def run_pre_filter_extension_add_pod(
        self, state: CycleState, pod: PodInfo, to_add: PodInfo, node: NodeInfo
    ) -> Status:
        raise AssertionError("plugin ran AddPod")

    def run_pre_filter_extension_remove_pod(
        self, state: CycleState, pod: PodInfo, to_remove: PodInfo, node: NodeInfo
    ) -> Status:
        raise AssertionError("plugin ran RemovePod")

    def activate(self, pods: Sequence[Pod]) -> None:
        raise AssertionError("plugin activated pods")

    def run_async(self, work: Callable[[], Status], done: Callable[[Status], None]) -> None:
        run_now(work, done)

    def poll_until(self, check: PollCheck, interval: float, timeout: float) -> str | None:
        return poll_once(check, interval, timeout)

    def pdbs(self) -> Sequence[PodDisruptionBudget]:
        return ()
