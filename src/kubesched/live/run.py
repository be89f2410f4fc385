"""kubesched as a second scheduler of a live cluster: the wiring.

``LiveScheduler`` puts a ``LiveCluster`` (the typed caches and the live
``Backend``), a ``LiveWriter`` (the API calls and events) and a ``Scheduler``
(the same core and plugins as the simulator) together. ``start_informers``
starts one ``Informer`` per kind the scheduler reads (``INFORMED``) feeding the
cluster and waits until each has delivered its first list (as kube-scheduler
waits for its caches to sync); ``run`` hands everything to
``kubesched.driver.loop.drive`` on wall-clock time until ``stop()`` (SIGTERM, a
lost lease) or ``until``. Tests may feed the cluster themselves instead.

The scheduler takes only the pods whose ``spec.schedulerName`` names one of its
profiles (``Scheduler.responsible_for``); every other pod is still cached (it
uses resources, it may be a preemption victim).

Binding runs as upstream's binding goroutine does: after the scheduling thread
assumed the pod, ``AsyncPool`` (``bind_workers`` threads, the GIL released in
socket IO) runs the PreBind and Bind plugins, and their status is posted back
to the scheduling thread (``LiveCluster.post``), which finishes the binding
cycle (a failure forgets the assumed pod and requeues it) between its cycles,
so the scheduler's state stays single-threaded. VolumeBinding's PreBind writes
the volumes (``LiveWriter.update_pv`` / ``update_pvc``) and waits there for the
PV controller and provisioners to bind the claims (``live.poll.CachePoller``:
each check runs on the scheduling thread; ``stop()`` ends the wait); while it
waits, the pool runs one more thread (``AsyncPool.waiting``), so waiting
bindings never hold up the others, as upstream's goroutine per binding. The async
preemption's API calls (victims' condition and DELETE, clearing lower
nominations) run on the same pool, as upstream's preemption goroutine; the
preemptor stays waiting (DefaultPreemption's PreEnqueue) until their outcome is
posted back. No in-tree Permit plugin waits. ``run`` waits for the work in
flight and finishes it before it returns; ``close`` then flushes the events.
With ``bind_workers=0`` everything runs on the scheduling thread, and PreBind
checks the bindings once (nothing could change while it waited).
Shadow mode writes nothing and stays synchronous.
"""

from __future__ import annotations

import logging
import random
import signal
import socket
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final, TextIO

from prometheus_client.registry import Collector

from kubesched.api.types import Time
from kubesched.driver.loop import RunStats, drive
from kubesched.framework.config import SchedulerConfig
from kubesched.live.client import KubeClient, Raw, Resource
from kubesched.live.cluster import ADDED, DELETED, MODIFIED, LiveCluster, wall_clock
from kubesched.live.informer import Informer, Timing
from kubesched.live.leader import LeaderElector, LeaseConfig
from kubesched.live.poll import CachePoller
from kubesched.live.pool import AsyncPool
from kubesched.live.serve import SchedulerCollector, StatusServer
from kubesched.live.shadow import ShadowReport, ShadowWriter
from kubesched.live.snapshot import SNAPSHOT_KINDS
from kubesched.live.writer import LiveWriter
from kubesched.scheduler.config import API_VERSION, KIND, parse_config
from kubesched.scheduler.metrics import Metrics
from kubesched.scheduler.registry import in_tree_registry
from kubesched.scheduler.scheduler import Scheduler

log = logging.getLogger(__name__)

LIVE_SCHEDULER_NAME: Final = "kubesched"
"""The profile name of live mode's default configuration."""

FOREVER: Final = 100 * 365 * 24 * 3600 * 1_000_000_000

BIND_WORKERS: Final = 4
"""Binding threads (upstream: a goroutine per binding)."""

INFORMED: Final[tuple[Resource, ...]] = tuple(
    r
    for r in SNAPSHOT_KINDS
    if r.kind
    in (
        "Namespace",
        "StorageClass",
        "CSINode",
        "PersistentVolume",
        "PersistentVolumeClaim",
        "Node",
        "PodDisruptionBudget",
        "Pod",
    )
)
"""The kinds the scheduler reads (its informers upstream)."""


class _Feed:
    """An informer's handler: every change becomes one notification of the cluster."""

    __slots__ = ("cluster", "kind")

    def __init__(self, cluster: LiveCluster, kind: str) -> None:
        self.cluster = cluster
        self.kind = kind

    def on_add(self, obj: Raw, initial: bool) -> None:
        self.cluster.notify(self.kind, ADDED, obj)

    def on_update(self, old: Raw, new: Raw) -> None:
        self.cluster.notify(self.kind, MODIFIED, new)

    def on_delete(self, obj: Raw, final_state_unknown: bool) -> None:
        self.cluster.notify(self.kind, DELETED, obj)


def live_default_config() -> SchedulerConfig:
    """kube-scheduler's defaults with one profile named ``kubesched`` (live mode
    must not take the pods of the cluster's own ``default-scheduler``)."""
    return parse_config(
        {
            "apiVersion": API_VERSION,
            "kind": KIND,
            "profiles": [{"schedulerName": LIVE_SCHEDULER_NAME}],
        },
        supported=in_tree_registry().keys(),
    )


class _Clock:
    __slots__ = ("now",)

    def __init__(self, now: Callable[[], Time]) -> None:
        self.now = now


@dataclass(slots=True)
class LiveScheduler:
    """One scheduler of a live cluster (see the module docstring)."""

    client: KubeClient
    config: SchedulerConfig
    clock: Callable[[], Time] = wall_clock
    seed: int | None = None
    """Seeds the tie-breaks and preemption offsets (None: from the OS)."""
    identity: str = field(default_factory=socket.gethostname)
    shadow: bool = False
    """Write nothing (``ShadowWriter``): shadow mode."""
    timing: Timing = field(default_factory=Timing)
    """The informers' watch timeouts."""
    bind_workers: int = BIND_WORKERS
    """Threads of the ``AsyncPool`` (0: bind and preempt on the scheduling thread)."""
    cluster: LiveCluster = field(init=False)
    writer: LiveWriter | ShadowWriter = field(init=False)
    scheduler: Scheduler = field(init=False)
    metrics: Metrics = field(default_factory=Metrics)
    stats: RunStats = field(default_factory=RunStats)
    informers: list[Informer] = field(default_factory=list)
    binder: AsyncPool | None = None

    def __post_init__(self) -> None:
        self.cluster = LiveCluster(self.clock)
        name = self.config.profiles[0].scheduler_name
        self.writer = (
            ShadowWriter()
            if self.shadow
            else LiveWriter(self.client, self.clock, name, f"{name}-{self.identity}", self.cluster)
        )
        self.scheduler = Scheduler(
            self.config,
            in_tree_registry(),
            clock=_Clock(self.clock),
            rng=random.Random(self.seed),
            reader=self.cluster,
            writer=self.writer,
            recorder=self.writer,
            metrics=self.metrics,
        )
        self.cluster.watchers.append(self.scheduler)
        self.cluster.object_watchers.append(self.scheduler)
        if not self.shadow and self.bind_workers > 0:
            self.binder = AsyncPool(self.cluster.post, self.bind_workers)
            self.scheduler.run_async = self.binder
            self.scheduler.poll_until = CachePoller(self.cluster, lend=self.binder.waiting)

    def start_informers(self, timeout: float = 60.0) -> bool:
        """Start the informers and wait until every one has listed (False: some
        did not within ``timeout`` seconds, or ``stop()`` came first)."""
        rng = random.Random(self.seed)
        for res in INFORMED:
            informer = Informer(
                self.client,
                res,
                _Feed(self.cluster, res.kind),
                rng=random.Random(rng.random()),
                timing=self.timing,
            )
            self.informers.append(informer.start())
        deadline = time.monotonic() + timeout
        for informer in self.informers:
            left = deadline - time.monotonic()
            if self.cluster.stopping or not informer.wait_for_sync(max(left, 0.0)):
                return False
        return True

    def stop_informers(self) -> None:
        for informer in self.informers:
            informer.stop()
        self.informers.clear()

    def run(self, until: Time | None = None) -> RunStats:
        """Schedule until ``stop()`` or the wall clock reaches ``until``; then
        finish the bindings in flight (at most 60 s: a binding still waiting
        for its volumes at ``until`` goes on waiting until ``stop()`` or
        ``close()`` cancels it, or its claims are bound)."""
        stats = drive(
            self.cluster,
            self.scheduler,
            self.stats,
            until=until,
            horizon=self.clock() + FOREVER,
            stop_when=lambda: self.cluster.stopping,
        )
        if self.binder is not None and not self._finish_in_flight(self.binder):
            log.error("bindings still in flight after 60 s")
        self.cluster.flush()
        return stats

    def _finish_in_flight(self, binder: AsyncPool, timeout: float = 60.0) -> bool:
        """Wait for the work in flight, running what it posts meanwhile (a waiting
        PreBind's checks, the caches' changes they wait for); False after
        ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while not binder.wait_idle(0.05):
            self.cluster.flush()
            if time.monotonic() > deadline:
                return False
        return True

    def close(self) -> None:
        """Stop the binding threads and flush the events (after ``run``); a
        binding still waiting for its volumes ends (``context canceled``)."""
        if self.binder is not None:
            self.cluster.stop()
            self.binder.shutdown()
        if isinstance(self.writer, LiveWriter):
            self.writer.close()

    def stop(self) -> None:
        """End ``run`` at its next step (any thread)."""
        self.cluster.stop()


class LiveRun:
    """``kubesched run``: leader election, informers, scheduling, clean shutdown.

    ``run(duration)`` returns "" after a clean stop (SIGTERM/SIGINT, or
    ``duration`` seconds), else why it ended: the lease was lost, or the caches
    did not sync. Signals are handled only on the main thread."""

    def __init__(
        self,
        client: KubeClient,
        config: SchedulerConfig,
        lease: LeaseConfig | None,
        seed: int | None,
        status_address: tuple[str, int] | None = None,
        shadow: TextIO | None = None,
    ) -> None:
        """``shadow``: run in shadow mode, the verdicts written there."""
        identity = f"{socket.gethostname()}_{uuid.uuid4()}"
        self.scheduler = LiveScheduler(
            client, config, seed=seed, identity=socket.gethostname(), shadow=shadow is not None
        )
        self.report: ShadowReport | None = None
        if shadow is not None:
            self.report = ShadowReport(shadow, self.scheduler.clock)
            assert isinstance(self.scheduler.writer, ShadowWriter)
            self.scheduler.writer.on_preemption = self.report.preempted
            self.scheduler.scheduler.observer = self.report
            self.scheduler.cluster.watchers.append(self.report)
        self.elector = LeaderElector(client, identity, lease) if lease is not None else None
        self._leading = threading.Event()
        self._lost = False
        self._stopped = False
        self._synced = False
        self.status: StatusServer | None = None
        if status_address is not None:
            collectors: list[Collector] = [self._collector()]
            if self.report is not None:
                collectors.append(self.report)
            if isinstance(self.scheduler.writer, LiveWriter):
                collectors.append(self.scheduler.writer.events)
            self.status = StatusServer(*status_address, collectors, self._not_ready)

    def _collector(self) -> SchedulerCollector:
        ls = self.scheduler
        elector = self.elector

        def leader() -> tuple[str, bool] | None:
            return None if elector is None else (elector.config.name, elector.leading)

        return SchedulerCollector(ls.metrics, ls.scheduler.pending_counts, leader)

    def _not_ready(self) -> str:
        if self.elector is not None and not self.elector.leading:
            return "leaderElection: not the leader"
        return "" if self._synced else "informer-sync: caches not synced"

    def stop(self) -> None:
        """Stop scheduling and give the lease up (any thread, signal handlers);
        requests waiting on a Retry-After fail at once (``KubeClient.interrupt``),
        so a throttling server does not hold the shutdown up."""
        self._stopped = True
        self.scheduler.stop()
        if self.elector is not None:
            self.elector.stop()
        self.scheduler.client.interrupt()
        self._leading.set()

    def _on_stopped_leading(self) -> None:
        if not self._stopped:
            self._lost = True
        self.scheduler.stop()
        self.scheduler.client.interrupt()
        self._leading.set()

    def run(self, duration: float | None = None) -> str:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, lambda *_: self.stop())
        if self.status is not None:
            self.status.start()
            log.info("serving /metrics, /healthz, /readyz, /livez on port %d", self.status.port)
        until = None if duration is None else time.time_ns() + int(duration * 1e9)
        if until is not None:
            timer = threading.Timer(duration or 0.0, self.stop)
            timer.daemon = True
            timer.start()
        thread = None
        if self.elector is not None:
            thread = threading.Thread(
                target=self.elector.run,
                args=(self._leading.set, self._on_stopped_leading),
                name="leader-election",
                daemon=True,
            )
            thread.start()
            log.info(
                "waiting for lease %s/%s", self.elector.config.namespace, self.elector.config.name
            )
            self._leading.wait()
        ls = self.scheduler
        try:
            if self._stopped or self._lost:
                return ""
            if not ls.start_informers():
                return "" if self._stopped else "caches did not sync"
            self._synced = True
            log.info("scheduling as %s", ", ".join(p.scheduler_name for p in ls.config.profiles))
            ls.run(until)
        finally:
            ls.stop_informers()
            ls.close()
            if self.elector is not None:
                self.elector.stop()
            if thread is not None:
                thread.join(10)
            if self.status is not None:
                self.status.stop()
            ls.client.close()
        if self._lost and self.elector is not None:
            c = self.elector.config
            return f"lost the lease {c.namespace}/{c.name}"
        log.info("stopped after %d scheduling cycles", ls.stats.cycles)
        return ""
