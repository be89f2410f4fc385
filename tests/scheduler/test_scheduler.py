"""Scheduler: one full scheduling + binding cycle against the simulated cluster.

The scheduler is wired to ``kubesched.sim.cluster.Cluster`` (reader, recorder,
and, through a recording proxy, writer), the in-tree registry and
``default_config``. Events and condition texts are upstream's
(schedule_one.go: ``Scheduled`` "Successfully assigned %v/%v to %v",
``FailedScheduling`` with the FitError text or "skip schedule deleting pod:
%v/%v", PodScheduled=False with reason Unschedulable / SchedulerError).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import replace

import pytest

from kubesched.api.types import Node, Pod, PodCondition
from kubesched.driver.record import EventRecord
from kubesched.framework.config import (
    FILTER,
    PERMIT,
    POST_FILTER,
    RESERVE,
    PluginRef,
    Profile,
    SchedulerConfig,
)
from kubesched.framework.cycle_state import CycleState
from kubesched.framework.interfaces import Plugin
from kubesched.framework.results import NodeToStatus, PostFilterResult
from kubesched.framework.status import SUCCESS, Code, Status
from kubesched.framework.types import NodeInfo, PodInfo
from kubesched.runtime.framework import PluginFactory
from kubesched.scheduler.config import default_config
from kubesched.scheduler.metrics import Metrics
from kubesched.scheduler.registry import in_tree_registry
from kubesched.scheduler.scheduler import NOTE_LENGTH_LIMIT, Scheduler, truncate_message
from kubesched.sim.cluster import Cluster, EngineClock
from kubesched.sim.engine import Engine
from tests.builders import make_node, make_pod
from tests.fakes import RecordingWriter
from tests.scheduler.harness import instance_registry

DEFAULT = "default-scheduler"


class Rig:
    """A Scheduler watching a simulated Cluster; the writer records every call."""

    def __init__(
        self,
        config: SchedulerConfig | None = None,
        registry: dict[str, PluginFactory] | None = None,
        seed: int = 0,
    ) -> None:
        self.engine = Engine()
        self.cluster = Cluster(self.engine, random.Random(1))
        self.writer = RecordingWriter(self.cluster)
        self.metrics = Metrics()
        reg = registry if registry is not None else dict(in_tree_registry())
        self.sched = Scheduler(
            config if config is not None else default_config(supported=reg.keys()),
            reg,
            clock=EngineClock(self.engine),
            rng=random.Random(seed),
            reader=self.cluster,
            writer=self.writer,
            recorder=self.cluster.record,
            metrics=self.metrics,
        )
        self.cluster.watchers.append(self.sched)

    def nodes(self, *nodes: Node) -> None:
        for n in nodes:
            self.cluster.create_node(n)
        self.cluster.flush()

    def pods(self, *pods: Pod) -> None:
        for p in pods:
            self.cluster.create_pod(p)
        self.cluster.flush()

    def cycle(self) -> bool:
        ran = self.sched.schedule_one()
        self.cluster.flush()
        return ran

    def run_until(self, done: Callable[[], bool], limit: int = 20) -> None:
        for _ in range(limit):
            if done():
                return
            self.engine.now += 1_000_000_000  # let backoffs expire
            self.sched.on_timer()
            self.cluster.flush()
            self.cycle()
        assert done()

    def pod(self, name: str, namespace: str = "default") -> Pod:
        return self.cluster.pods[f"{namespace}/{name}"]

    def events(self, reason: str | None = None) -> list[EventRecord]:
        return [e for e in self.cluster.record.events if reason is None or e.reason == reason]

    def condition(self, name: str) -> PodCondition | None:
        return self.pod(name).condition("PodScheduled")


def node(name: str, cpu: str = "4", **labels: str) -> Node:
    b = make_node(name).capacity(cpu=cpu, memory="8Gi", pods=20)
    for k, v in labels.items():
        b.label(k, v)
    return b.obj()


def profile_with(point: str, *names: str, base: Profile | None = None) -> Profile:
    prof = base or default_config(supported=in_tree_registry().keys()).profiles[0]
    plugins = dict(prof.plugins)
    plugins[point] = tuple(PluginRef(n) for n in names)
    return replace(prof, plugins=plugins)


def config_of(*profiles: Profile) -> SchedulerConfig:
    return replace(default_config(supported=in_tree_registry().keys()), profiles=profiles)


def registry_with(*extra: Plugin) -> dict[str, PluginFactory]:
    """The in-tree registry plus these plugin instances under their names."""
    return {**in_tree_registry(), **instance_registry(*extra)}


# --------------------------------------------------------------------------- binding


def test_pod_is_bound_and_gets_the_scheduled_event() -> None:
    rig = Rig()
    rig.nodes(node("n1"))
    rig.pods(make_pod("p").req(cpu="1").obj())
    assert rig.cycle()
    assert rig.pod("p").node_name == "n1"
    assert rig.writer.binds == [("default/p", "n1")]
    [ev] = rig.events()
    assert (ev.type, ev.reason, ev.object, ev.message) == (
        "Normal",
        "Scheduled",
        "default/p",
        "Successfully assigned default/p to n1",
    )
    # The binding came back from the cluster: the assumed pod is confirmed.
    uid = rig.pod("p").uid
    assert not rig.sched.cache.is_assumed(uid)
    assert rig.sched.cache.pod_count() == 1
    assert rig.sched.queue.pending_pods() == {
        "active": 0,
        "backoff": 0,
        "unschedulable": 0,
        "gated": 0,
    }
    assert not rig.cycle()


def test_bound_pods_count_against_their_node() -> None:
    rig = Rig()
    rig.nodes(node("n1", cpu="2"), node("n2", cpu="2"))
    rig.pods(*(make_pod(f"p{i}").req(cpu="1").obj() for i in range(4)))
    while rig.cycle():
        pass
    placed = sorted(rig.pod(f"p{i}").node_name for i in range(4))
    assert placed == ["n1", "n1", "n2", "n2"]


# --------------------------------------------------------------------------- failures


def no_post_filter_config() -> SchedulerConfig:
    return config_of(profile_with(POST_FILTER))


@pytest.mark.parametrize(
    ("config", "want"),
    [
        pytest.param(
            no_post_filter_config,
            "0/1 nodes are available: 1 Insufficient cpu.",
            id="without PostFilter plugins: the FitError text",
        ),
        pytest.param(
            lambda: None,
            "0/1 nodes are available: 1 Insufficient cpu. no new claims to deallocate, "
            "preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling.",
            id="default profile: the FitError text, then the reasons of every PostFilter plugin "
            "(DynamicResources before DefaultPreemption)",
        ),
    ],
)
def test_unschedulable_pod(config: Callable[[], SchedulerConfig | None], want: str) -> None:
    rig = Rig(config())
    rig.nodes(node("n1", cpu="1"))
    rig.pods(make_pod("p").req(cpu="2").obj())
    assert rig.cycle()
    assert rig.pod("p").node_name == ""
    [ev] = rig.events()
    assert (ev.type, ev.reason, ev.object, ev.message) == (
        "Warning",
        "FailedScheduling",
        "default/p",
        want,
    )
    cond = rig.condition("p")
    assert cond is not None
    assert (cond.status, cond.reason, cond.message) == ("False", "Unschedulable", want)
    [patch] = rig.writer.patches
    assert patch.pod == "default/p"
    assert patch.condition is not None
    assert (patch.condition.type, patch.condition.status, patch.condition.reason) == (
        "PodScheduled",
        "False",
        "Unschedulable",
    )
    assert patch.nominated_node_name is None
    [queued] = rig.sched.queue.unschedulable_pods()
    assert queued.pod.name == "p"
    assert queued.unschedulable_plugins == {"NodeResourcesFit"}
    assert rig.metrics.schedule_attempts["unschedulable"] == 1


def test_no_nodes() -> None:
    rig = Rig()
    rig.pods(make_pod("p").obj())
    assert rig.cycle()
    [ev] = rig.events()
    assert (ev.reason, ev.message) == ("FailedScheduling", "no nodes available to schedule pods")
    cond = rig.condition("p")
    assert cond is not None
    assert (cond.status, cond.reason) == ("False", "Unschedulable")


def test_pod_of_an_unknown_scheduler_name_is_left_alone() -> None:
    rig = Rig()
    rig.nodes(node("n1"))
    rig.pods(make_pod("p").scheduler_name("other-scheduler").obj())
    assert not rig.cycle()
    assert rig.events() == []
    assert rig.writer.binds == []
    assert rig.writer.patches == []
    assert rig.pod("p").node_name == ""
    assert sum(rig.metrics.schedule_attempts.values()) == 0


def test_deleting_pod_is_skipped() -> None:
    rig = Rig()
    rig.nodes(node("n1"))
    rig.pods(make_pod("p").terminating(0).obj())
    assert rig.cycle()
    [ev] = rig.events()
    assert (ev.type, ev.reason, ev.message) == (
        "Warning",
        "FailedScheduling",
        "skip schedule deleting pod: default/p",
    )
    assert rig.writer.binds == []
    assert rig.writer.patches == []
    assert sum(rig.metrics.schedule_attempts.values()) == 0
    assert sum(rig.sched.queue.pending_pods().values()) == 0
    assert not rig.cycle()


class FailingFilter:
    name = "FailingFilter"

    def filter(self, state: CycleState, pod: PodInfo, node: NodeInfo) -> Status:
        return Status(Code.ERROR, "boom")


def test_filter_error_is_a_scheduler_error() -> None:
    prof = profile_with(FILTER, "FailingFilter")
    rig = Rig(config_of(prof), registry_with(FailingFilter()))
    rig.nodes(node("n1"))
    rig.pods(make_pod("p").obj())
    assert rig.cycle()
    msg = 'running "FailingFilter" filter plugin: boom'
    [ev] = rig.events()
    assert (ev.reason, ev.message) == ("FailedScheduling", msg)
    cond = rig.condition("p")
    assert cond is not None
    assert (cond.status, cond.reason, cond.message) == ("False", "SchedulerError", msg)
    assert rig.metrics.schedule_attempts["error"] == 1


def test_bind_failure_forgets_the_pod_and_reports_an_error() -> None:
    rig = Rig()
    rig.writer.bind_error = RuntimeError("apiserver is down")
    rig.nodes(node("n1"))
    rig.pods(make_pod("p").req(cpu="1").obj())
    assert rig.cycle()
    msg = 'running Bind plugin "DefaultBinder": apiserver is down'
    [ev] = rig.events()
    assert (ev.reason, ev.message) == ("FailedScheduling", msg)
    cond = rig.condition("p")
    assert cond is not None
    assert cond.reason == "SchedulerError"
    assert rig.sched.cache.pod_count() == 0
    info = rig.sched.cache.nodes.get("n1")
    assert info is not None and info.requested.milli_cpu == 0
    assert rig.metrics.schedule_attempts == {"scheduled": 0, "unschedulable": 0, "error": 1}


# --------------------------------------------------------------------------- PostFilter hand-off


class FakePreemption:
    """A PostFilter plugin with an injected answer."""

    name = "FakePreemption"

    def __init__(self, result: PostFilterResult | None, status: Status) -> None:
        self.result = result
        self.status = status
        self.calls = 0

    def post_filter(
        self, state: CycleState, pod: PodInfo, statuses: NodeToStatus
    ) -> tuple[PostFilterResult | None, Status]:
        self.calls += 1
        return self.result, self.status


def fake_preemption_rig(result: PostFilterResult | None, status: Status) -> Rig:
    prof = profile_with(POST_FILTER, "FakePreemption")
    return Rig(config_of(prof), registry_with(FakePreemption(result, status)))


def test_post_filter_message_is_appended() -> None:
    rig = fake_preemption_rig(None, Status(Code.UNSCHEDULABLE, "preemption: fake says no"))
    rig.nodes(node("n1", cpu="1"))
    rig.pods(make_pod("p").req(cpu="2").obj())
    rig.cycle()
    [ev] = rig.events()
    assert ev.message == "0/1 nodes are available: 1 Insufficient cpu. preemption: fake says no"


def test_long_messages_are_truncated_in_the_event_only() -> None:
    long = "preemption: " + "x" * 2000
    rig = fake_preemption_rig(None, Status(Code.UNSCHEDULABLE, long))
    rig.nodes(node("n1", cpu="1"))
    rig.pods(make_pod("p").req(cpu="2").obj())
    rig.cycle()
    full = f"0/1 nodes are available: 1 Insufficient cpu. {long}"
    [ev] = rig.events()
    assert len(ev.message) == NOTE_LENGTH_LIMIT
    assert ev.message == full[: NOTE_LENGTH_LIMIT - 4] + " ..."
    cond = rig.condition("p")
    assert cond is not None and cond.message == full


@pytest.mark.parametrize(
    ("message", "want"),
    [
        pytest.param("short", "short", id="short messages are kept"),
        pytest.param("x" * 1024, "x" * 1024, id="exactly the limit is kept"),
        pytest.param("x" * 1025, "x" * 1020 + " ...", id="over the limit: cut with ' ...'"),
    ],
)
def test_truncate_message(message: str, want: str) -> None:
    assert truncate_message(message) == want


def test_nomination_from_post_filter_is_patched_and_recorded() -> None:
    rig = fake_preemption_rig(PostFilterResult.nominated("n1"), SUCCESS)
    rig.nodes(node("n1", cpu="1"), node("n2", cpu="1"))
    rig.pods(make_pod("high").priority(100).req(cpu="2").obj())
    rig.cycle()
    assert rig.pod("high").nominated_node_name == "n1"
    assert [p.nominated_node_name for p in rig.writer.patches] == ["n1"]
    assert [pi.pod.name for pi in rig.sched.nominated_pods_for_node("n1")] == ["high"]
    # The status is always Unschedulable with the FitError text (no PostFilter message
    # on success).
    [ev] = rig.events()
    assert ev.message == "0/2 nodes are available: 2 Insufficient cpu."


@pytest.mark.parametrize(
    ("low_priority", "want_node"),
    [
        pytest.param(0, "n2", id="a lower-priority pod stays off the nominated node"),
        pytest.param(200, "n1", id="a higher-priority pod ignores the nomination"),
    ],
)
def test_nominated_pods_hold_their_node(low_priority: int, want_node: str) -> None:
    """n1 scores best for the small pod, but "high" (priority 100) is nominated
    there and needs 3 of its 2 free CPUs together with the small pod."""
    rig = fake_preemption_rig(PostFilterResult.nominated("n1"), SUCCESS)
    rig.nodes(node("n1", cpu="8"), node("n2", cpu="1"))
    rig.pods(make_pod("used").req(cpu="6").node("n1").obj())
    rig.pods(make_pod("high").priority(100).req(cpu="3").obj())
    rig.cycle()
    assert [pi.pod.name for pi in rig.sched.nominated_pods_for_node("n1")] == ["high"]
    rig.pods(make_pod("small").priority(low_priority).req(cpu="1").obj())
    rig.run_until(lambda: bool(rig.pod("small").node_name))
    assert rig.pod("small").node_name == want_node
    assert rig.pod("high").node_name == ""


# --------------------------------------------------------------------------- Reserve / Permit


class RejectingReserve:
    name = "FakeReserve"

    def __init__(self, reject: bool) -> None:
        self.reject = reject
        self.unreserved: list[str] = []

    def reserve(self, state: CycleState, pod: PodInfo, node_name: str) -> Status:
        return Status(Code.UNSCHEDULABLE, "reserve rejected") if self.reject else SUCCESS

    def unreserve(self, state: CycleState, pod: PodInfo, node_name: str) -> None:
        self.unreserved.append(node_name)


class RejectingPermit:
    name = "FakePermit"

    def permit(self, state: CycleState, pod: PodInfo, node_name: str) -> tuple[Status, float]:
        return Status(Code.UNSCHEDULABLE, "permit rejected"), 0.0


def rejecting_rig(point: str) -> tuple[Rig, RejectingReserve]:
    reserve = RejectingReserve(reject=point == RESERVE)
    if point == RESERVE:
        prof = profile_with(RESERVE, "FakeReserve")
        reg = registry_with(reserve)
    else:
        prof = profile_with(PERMIT, "FakePermit", base=profile_with(RESERVE, "FakeReserve"))
        reg = registry_with(reserve, RejectingPermit())
    rig = Rig(config_of(prof), reg)
    rig.nodes(node("n1"))
    rig.pods(make_pod("p").req(cpu="1").obj())
    rig.cycle()
    return rig, reserve


@pytest.mark.parametrize("point", [RESERVE, PERMIT])
def test_reserve_or_permit_rejection_unreserves_and_forgets(point: str) -> None:
    rig, reserve = rejecting_rig(point)
    assert reserve.unreserved == ["n1"]
    assert rig.pod("p").node_name == ""
    assert rig.sched.cache.pod_count() == 0
    cond = rig.condition("p")
    assert cond is not None and cond.reason == "Unschedulable"
    [queued] = rig.sched.queue.unschedulable_pods()
    plugin = "FakeReserve" if point == RESERVE else "FakePermit"
    assert queued.unschedulable_plugins == {plugin}


@pytest.mark.parametrize(
    ("point", "reason"), [(RESERVE, "reserve rejected"), (PERMIT, "permit rejected")]
)
def test_reserve_or_permit_rejection_message_is_a_fit_error(point: str, reason: str) -> None:
    rig, _ = rejecting_rig(point)
    [ev] = rig.events()
    assert ev.message == f"0/1 nodes are available: 1 {reason}."


# --------------------------------------------------------------------------- profiles, metrics


def test_each_profile_schedules_its_own_pods_and_metrics_count_per_profile() -> None:
    base = default_config(supported=in_tree_registry().keys()).profiles[0]
    second = replace(base, scheduler_name="second")
    rig = Rig(config_of(base, second))
    rig.nodes(node("n1", cpu="2"))
    rig.pods(
        make_pod("a").req(cpu="1").obj(),
        make_pod("b").scheduler_name("second").req(cpu="1").obj(),
        make_pod("c").scheduler_name("second").req(cpu="1").obj(),
    )
    while rig.cycle():
        pass
    bound = sorted(p for p in ("a", "b", "c") if rig.pod(p).node_name)
    assert len(bound) == 2
    m = rig.metrics
    assert m.schedule_attempts["scheduled"] == 2
    assert m.schedule_attempts["unschedulable"] >= 1
    assert m.schedule_attempts["error"] == 0
    by_profile = {k: v for k, v in m.schedule_attempts_by_profile.items() if v}
    scheduled = {prof for (result, prof), v in by_profile.items() if result == "scheduled"}
    assert scheduled <= {DEFAULT, "second"}
    assert sum(v for (r, _), v in by_profile.items() if r == "scheduled") == 2
    assert m.pod_scheduling_attempts.count == 2
    assert m.pod_scheduling_attempts.sum == 2


def test_attempts_histogram_counts_every_try_of_a_pod() -> None:
    """scheduler_pod_scheduling_attempts observes the attempts of a pod when it binds."""
    rig = Rig(no_post_filter_config())
    rig.nodes(node("n1", cpu="1"))
    rig.pods(make_pod("p").req(cpu="2").obj())
    rig.cycle()
    assert rig.metrics.pod_scheduling_attempts.count == 0
    rig.nodes(node("n2", cpu="4"))  # a node add moves the pod back to the queue
    rig.run_until(lambda: bool(rig.pod("p").node_name))
    assert rig.pod("p").node_name == "n2"
    assert rig.metrics.pod_scheduling_attempts.count == 1
    assert rig.metrics.pod_scheduling_attempts.sum == 2
    assert rig.metrics.schedule_attempts == {"scheduled": 1, "unschedulable": 1, "error": 0}
