"""The in-memory cluster (sim/cluster.py): the API server, kubelet and pod GC of a run.

Behaviour under test, each as upstream Kubernetes does it:

- binding (pods/binding + kubelet start): phase Running, ``status.startTime``,
  ``PodScheduled=True``, ``status.nominatedNodeName`` cleared (the
  ClearingNominatedNodeNameAfterBinding gate, beta and on since v1.35);
- graceful deletion (apiserver registry/rest BeforeDelete + pod strategy
  CheckGracefulDelete): a bound, running pod gets ``metadata.deletionTimestamp``
  and keeps its node (and resources) for ``terminationGracePeriodSeconds``; an
  unbound or finished pod, or grace 0, goes at once; a second DELETE of a
  terminating pod changes nothing;
- ``run-for`` completion: phase Succeeded, after which the scheduler no longer
  counts the pod (its informer excludes terminal pods);
- node deletion takes the node's pods (deletion reason ``NodeDeleted``);
- every change is an (old, new) watch event delivered by ``flush`` in order.
"""

from __future__ import annotations

import random

import pytest

from kubesched.api.types import Node, Pod, PodCondition
from kubesched.scheduler.config import default_config
from kubesched.scheduler.registry import in_tree_registry
from kubesched.sim.cluster import (
    REASON_DELETED,
    REASON_NODE_DELETED,
    REASON_PREEMPTED,
    Cluster,
)
from kubesched.sim.engine import Engine
from kubesched.sim.simulation import Simulation
from tests.builders import make_node, make_pod

S = 1_000_000_000


class Recorder:
    """A watcher that logs every delivered event with the objects it carried."""

    def __init__(self) -> None:
        self.log: list[tuple[str, object, object]] = []

    def on_node_add(self, node: Node) -> None:
        self.log.append(("node_add", None, node))

    def on_node_update(self, old: Node, new: Node) -> None:
        self.log.append(("node_update", old, new))

    def on_node_delete(self, node: Node) -> None:
        self.log.append(("node_delete", node, None))

    def on_pod_add(self, pod: Pod) -> None:
        self.log.append(("pod_add", None, pod))

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        self.log.append(("pod_update", old, new))

    def on_pod_delete(self, pod: Pod) -> None:
        self.log.append(("pod_delete", pod, None))

    def kinds(self) -> list[str]:
        return [k for k, _, _ in self.log]

    def clear(self) -> None:
        self.log.clear()


def new_cluster(watch: bool = False) -> tuple[Cluster, Recorder]:
    cluster = Cluster(Engine(), random.Random(0), watch=watch)
    rec = Recorder()
    cluster.watchers.append(rec)
    return cluster, rec


def node(name: str = "n1", cpu: str = "4") -> Node:
    return make_node(name).capacity(cpu=cpu, memory="8Gi", pods=110).obj()


def advance(cluster: Cluster, to: int) -> None:
    """Run every cluster action due up to ``to`` (inclusive), in time order, each
    instant's watch events delivered before the clock moves on (as a run does)."""
    engine = cluster.engine
    cluster.flush()
    while (t := engine.next_time()) is not None and t <= to:
        engine.now = t
        engine.run_due()
        cluster.flush()
    engine.now = to


def bound_pod(cluster: Cluster, name: str = "p", grace: int | None = None) -> Pod:
    """Create ``name`` unbound and bind it to n1 (which must exist)."""
    b = make_pod(name).req(cpu="1")
    if grace is not None:
        b = b.grace(grace)
    cluster.create_pod(b.obj())
    cluster.bind(cluster.pods[f"default/{name}"], "n1")
    return cluster.pods[f"default/{name}"]


# --------------------------------------------------------------------------- creation


def test_created_pending_pod_gets_uid_and_creation_time() -> None:
    cluster, rec = new_cluster()
    cluster.engine.now = 3 * S
    pod = make_pod("p").obj()
    cluster.create_pod(pod)
    stored = cluster.pods["default/p"]
    assert stored.phase == "Pending"
    assert stored.uid and stored.uid != "default/p"  # a real uid, not the builder's default
    assert stored.creation_timestamp == 3 * S
    cluster.flush()
    assert rec.kinds() == ["pod_add"]
    record = cluster.record.lives[stored.uid]
    assert (record.created_at, record.scheduled_at, record.deleted_at) == (3 * S, None, None)


def test_uids_come_from_the_seeded_random_source() -> None:
    a = Cluster(Engine(), random.Random(7))
    b = Cluster(Engine(), random.Random(7))
    c = Cluster(Engine(), random.Random(8))
    assert [a.new_uid(), a.new_uid()] == [b.new_uid(), b.new_uid()]
    assert a.new_uid() != c.new_uid()


def test_pod_created_bound_starts_running_at_creation() -> None:
    cluster, _ = new_cluster()
    cluster.create_node(node())
    cluster.engine.now = 2 * S
    cluster.create_pod(make_pod("p").node("n1").phase("Pending").obj())
    stored = cluster.pods["default/p"]
    assert stored.phase == "Running"
    assert stored.start_time == 2 * S
    cluster.flush()
    assert cluster.record.lives[stored.uid].scheduled_at == 2 * S


def test_pod_created_bound_keeps_its_own_start_time() -> None:
    cluster, _ = new_cluster()
    cluster.create_node(node())
    cluster.create_pod(make_pod("p").node("n1").start_time(-150 * S).obj())
    assert cluster.pods["default/p"].start_time == -150 * S


# --------------------------------------------------------------------------- binding


def test_bind_runs_the_pod_and_emits_old_and_new() -> None:
    cluster, rec = new_cluster()
    cluster.create_node(node())
    cluster.create_pod(
        make_pod("p")
        .nominated("n1")
        .condition("PodScheduled", "False", "Unschedulable", "0/1 nodes are available")
        .obj()
    )
    cluster.flush()
    rec.clear()
    before = cluster.pods["default/p"]
    cluster.engine.now = 4 * S
    cluster.bind(before, "n1")
    after = cluster.pods["default/p"]

    assert after is not before
    assert (after.node_name, after.phase, after.start_time) == ("n1", "Running", 4 * S)
    assert after.nominated_node_name == ""
    scheduled = [c for c in after.conditions if c.type == "PodScheduled"]
    assert scheduled == [PodCondition("PodScheduled", "True", "", "", 4 * S)]
    # The old object is untouched: watchers compare old and new.
    assert (before.node_name, before.phase, before.nominated_node_name) == ("", "Pending", "n1")

    assert cluster.flush() == 1
    ((kind, old, new),) = rec.log
    assert kind == "pod_update"
    assert old is before
    assert new is after
    assert cluster.record.lives[after.uid].scheduled_at == 4 * S


@pytest.mark.parametrize(
    ("setup", "target", "error"),
    [
        pytest.param("unbound", "ghost", KeyError, id="a node that does not exist"),
        pytest.param("bound", "n1", ValueError, id="a pod already assigned"),
        pytest.param("stale", "n1", KeyError, id="a pod whose uid is not the stored one"),
    ],
)
def test_bind_refuses(setup: str, target: str, error: type[Exception]) -> None:
    cluster, _ = new_cluster()
    cluster.create_node(node())
    cluster.create_pod(make_pod("p").obj())
    pod = cluster.pods["default/p"]
    if setup == "bound":
        cluster.bind(pod, "n1")
        pod = cluster.pods["default/p"]
    elif setup == "stale":
        pod = make_pod("p").uid("some-other-uid").obj()
    with pytest.raises(error):
        cluster.bind(pod, target)


# --------------------------------------------------------------------------- graceful deletion


def test_graceful_deletion_keeps_the_pod_until_its_grace_period_ends() -> None:
    cluster, rec = new_cluster()
    cluster.create_node(node())
    pod = bound_pod(cluster)  # default terminationGracePeriodSeconds: 30
    cluster.flush()
    rec.clear()

    cluster.engine.now = 10 * S
    cluster.delete_gracefully(pod, REASON_DELETED)
    terminating = cluster.pods["default/p"]
    assert terminating.deletion_timestamp is not None
    assert terminating.node_name == "n1"
    cluster.flush()
    assert cluster.record.lives[pod.uid].deleted_at is None
    assert rec.kinds() == ["pod_update"]
    assert rec.log[0][2] is terminating

    advance(cluster, 40 * S - 1)
    assert "default/p" in cluster.pods  # still holds its node one nanosecond before

    advance(cluster, 40 * S)
    assert "default/p" not in cluster.pods
    record = cluster.record.lives[pod.uid]
    assert (record.deleted_at, record.deletion_reason) == (40 * S, REASON_DELETED)
    cluster.flush()
    assert rec.kinds() == ["pod_update", "pod_delete"]


def test_deletion_timestamp_is_the_end_of_the_grace_period() -> None:
    cluster, _ = new_cluster()
    cluster.create_node(node())
    pod = bound_pod(cluster, grace=30)
    cluster.engine.now = 10 * S
    cluster.delete_gracefully(pod, REASON_DELETED)
    assert cluster.pods["default/p"].deletion_timestamp == 40 * S


def test_grace_period_comes_from_the_pod_spec() -> None:
    cluster, _ = new_cluster()
    cluster.create_node(node())
    pod = bound_pod(cluster, grace=3)
    cluster.delete_gracefully(pod, REASON_DELETED)
    advance(cluster, 3 * S)
    assert cluster.record.lives[pod.uid].deleted_at == 3 * S


@pytest.mark.parametrize(
    "case",
    [
        pytest.param("grace-0", id="a bound pod with grace 0 goes at once"),
        pytest.param("unbound", id="a pod never bound goes at once whatever its grace"),
        pytest.param("succeeded", id="a finished pod goes at once"),
    ],
)
def test_deleted_at_once(case: str) -> None:
    cluster, rec = new_cluster()
    cluster.create_node(node())
    if case == "grace-0":
        pod = bound_pod(cluster, grace=0)
    elif case == "unbound":
        cluster.create_pod(make_pod("p").grace(60).obj())
        pod = cluster.pods["default/p"]
    else:
        cluster.create_pod(make_pod("p").obj(), run_for=5 * S)
        cluster.bind(cluster.pods["default/p"], "n1")
        advance(cluster, 5 * S)
        pod = cluster.pods["default/p"]
        assert pod.phase == "Succeeded"
    cluster.flush()
    rec.clear()
    cluster.engine.now = 7 * S
    cluster.delete_gracefully(pod, REASON_DELETED)
    assert "default/p" not in cluster.pods
    cluster.flush()
    record = cluster.record.lives[pod.uid]
    assert (record.deleted_at, record.deletion_reason) == (7 * S, REASON_DELETED)
    assert rec.kinds()[-1] == "pod_delete"
    assert len(cluster.engine) == 0  # no grace-period timer left behind


def test_already_terminating_pod_is_not_deleted_twice() -> None:
    cluster, rec = new_cluster()
    cluster.create_node(node())
    pod = bound_pod(cluster, grace=30)
    cluster.delete_gracefully(pod, REASON_DELETED)
    first = cluster.pods["default/p"]
    cluster.flush()
    rec.clear()

    cluster.engine.now = 5 * S
    cluster.delete_gracefully(first, REASON_DELETED)
    cluster.delete_pod(first)
    assert cluster.pods["default/p"] is first  # no new update
    assert cluster.flush() == 0
    assert len(cluster.engine) == 1  # still the one grace-period timer

    advance(cluster, 30 * S)
    assert cluster.record.lives[pod.uid].deleted_at == 30 * S


def test_a_stale_pod_object_deletes_nothing() -> None:
    cluster, _ = new_cluster()
    cluster.create_node(node())
    bound_pod(cluster)
    cluster.delete_gracefully(make_pod("p").uid("another-uid").obj(), REASON_DELETED)
    cluster.delete_pod(make_pod("p").uid("another-uid").obj())
    assert cluster.pods["default/p"].deletion_timestamp is None


@pytest.mark.parametrize(
    ("condition", "expected"),
    [
        pytest.param(
            PodCondition("DisruptionTarget", "True", "PreemptionByScheduler", "preempting"),
            REASON_PREEMPTED,
            id="DisruptionTarget by PreemptionByScheduler is a preemption",
        ),
        pytest.param(
            PodCondition("DisruptionTarget", "True", "DeletionByTaintManager", "taint"),
            REASON_DELETED,
            id="DisruptionTarget for another reason is a plain deletion",
        ),
        pytest.param(None, REASON_DELETED, id="no condition is a plain deletion"),
    ],
)
def test_delete_pod_reason_follows_the_stored_condition(
    condition: PodCondition | None, expected: str
) -> None:
    # As upstream PreemptPod does: patch the status of the victim, then DELETE with the
    # victim object it had *before* the patch.
    cluster, _ = new_cluster()
    cluster.create_node(node())
    victim = bound_pod(cluster, grace=0)
    if condition is not None:
        cluster.patch_pod_status(victim, condition=condition)
    cluster.delete_pod(victim)
    cluster.flush()
    record = cluster.record.lives[victim.uid]
    assert record.deleted_at == 0
    assert record.deletion_reason == expected


# --------------------------------------------------------------------------- status patches


def test_patch_nominated_node_name_set_clear_and_no_op() -> None:
    cluster, rec = new_cluster()
    cluster.create_pod(make_pod("p").obj())
    cluster.flush()
    rec.clear()
    pod = cluster.pods["default/p"]
    cluster.patch_pod_status(pod, nominated_node_name="n1")
    assert cluster.pods["default/p"].nominated_node_name == "n1"
    cluster.patch_pod_status(cluster.pods["default/p"], nominated_node_name="n1")
    cluster.patch_pod_status(cluster.pods["default/p"])
    assert cluster.flush() == 1  # the two no-op patches emitted nothing
    cluster.patch_pod_status(cluster.pods["default/p"], nominated_node_name="")
    assert cluster.pods["default/p"].nominated_node_name == ""


def test_condition_transition_time_changes_only_with_status() -> None:
    # podutil.UpdatePodCondition: same status keeps lastTransitionTime.
    cluster, _ = new_cluster()
    cluster.create_pod(make_pod("p").obj())
    pod = cluster.pods["default/p"]
    cluster.patch_pod_status(pod, condition=PodCondition("PodScheduled", "False", "A", "m1", S))
    cluster.patch_pod_status(
        cluster.pods["default/p"], condition=PodCondition("PodScheduled", "False", "A", "m2", 2 * S)
    )
    (cond,) = cluster.pods["default/p"].conditions
    assert (cond.message, cond.last_transition_time) == ("m2", S)
    cluster.patch_pod_status(
        cluster.pods["default/p"], condition=PodCondition("PodScheduled", "True", "", "", 3 * S)
    )
    (cond,) = cluster.pods["default/p"].conditions
    assert (cond.status, cond.last_transition_time) == ("True", 3 * S)


# --------------------------------------------------------------------------- run-for


def test_run_for_counts_from_binding_and_ends_succeeded() -> None:
    cluster, rec = new_cluster()
    cluster.create_node(node())
    cluster.create_pod(make_pod("p").req(cpu="1").obj(), run_for=60 * S)
    advance(cluster, 5 * S)
    cluster.bind(cluster.pods["default/p"], "n1")
    cluster.flush()
    rec.clear()

    advance(cluster, 65 * S - 1)
    assert cluster.pods["default/p"].phase == "Running"
    advance(cluster, 65 * S)
    done = cluster.pods["default/p"]
    assert done.phase == "Succeeded"
    assert done.node_name == "n1"
    record = cluster.record.lives[done.uid]
    assert (record.deleted_at, record.deletion_reason) == (None, None)
    cluster.flush()
    ((kind, old, new),) = rec.log
    assert kind == "pod_update"
    assert isinstance(old, Pod) and old.phase == "Running"
    assert new is done


def test_run_for_of_a_pod_created_bound_counts_from_creation() -> None:
    cluster, _ = new_cluster()
    cluster.create_node(node())
    cluster.engine.now = 10 * S
    cluster.create_pod(make_pod("p").node("n1").obj(), run_for=20 * S)
    advance(cluster, 30 * S)
    assert cluster.pods["default/p"].phase == "Succeeded"


def test_completion_timer_of_a_deleted_pod_does_not_touch_its_successor() -> None:
    cluster, _ = new_cluster()
    cluster.create_node(node())
    cluster.create_pod(make_pod("p").node("n1").grace(0).obj(), run_for=60 * S)
    advance(cluster, 10 * S)
    cluster.delete_gracefully(cluster.pods["default/p"], REASON_DELETED)
    cluster.create_pod(make_pod("p").node("n1").obj())  # same name, new uid
    advance(cluster, 60 * S)
    assert cluster.pods["default/p"].phase == "Running"


def test_succeeded_pod_releases_its_resources_in_the_scheduler_cache() -> None:
    sim = Simulation(default_config(supported=in_tree_registry().keys()), dict(in_tree_registry()))
    sim.cluster.create_node(node(cpu="4"))
    sim.cluster.create_pod(make_pod("job").req(cpu="3").obj(), run_for=60 * S)
    sim.run(until=30 * S)
    info = sim.scheduler.cache.nodes.get("n1")
    assert info is not None
    assert info.requested.milli_cpu == 3000
    assert sim.scheduler.cache.pod_count() == 1

    sim.run()
    assert sim.cluster.pods["default/job"].phase == "Succeeded"
    info = sim.scheduler.cache.nodes.get("n1")
    assert info is not None
    assert info.requested.milli_cpu == 0
    assert sim.scheduler.cache.pod_count() == 0


def test_freed_resources_let_a_waiting_pod_schedule() -> None:
    sim = Simulation(default_config(supported=in_tree_registry().keys()), dict(in_tree_registry()))
    sim.cluster.create_node(node(cpu="4"))
    sim.cluster.create_pod(make_pod("job").req(cpu="3").obj(), run_for=60 * S)
    sim.cluster.create_pod(make_pod("next").req(cpu="3").obj())
    sim.run()
    assert sim.cluster.pods["default/next"].node_name == "n1"
    assert sim.cluster.record.lives[sim.cluster.pods["default/next"].uid].scheduled_at == 60 * S


# --------------------------------------------------------------------------- nodes


def test_node_deletion_takes_its_pods() -> None:
    cluster, rec = new_cluster()
    cluster.create_node(node("n1"))
    cluster.create_node(node("n2"))
    for name, where in [("a", "n1"), ("b", "n2"), ("c", "n1")]:
        cluster.create_pod(make_pod(name).node(where).obj())
    cluster.create_pod(make_pod("pending").obj())
    cluster.flush()
    rec.clear()

    cluster.engine.now = 9 * S
    cluster.delete_node("n1")
    assert set(cluster.pods) == {"default/b", "default/pending"}
    assert "n1" not in cluster.nodes
    cluster.flush()
    for name in ("a", "c"):
        record = next(r for r in cluster.record.lives.values() if r.pod.name == name)
        assert (record.deleted_at, record.deletion_reason) == (9 * S, REASON_NODE_DELETED)
    assert rec.kinds() == ["node_delete", "pod_delete", "pod_delete"]
    assert {p.name for k, p, _ in rec.log if k == "pod_delete"} == {"a", "c"}  # type: ignore[attr-defined]


def test_deleting_an_unknown_node_is_a_no_op() -> None:
    cluster, _ = new_cluster()
    cluster.delete_node("ghost")
    assert cluster.flush() == 0


# --------------------------------------------------------------------------- events, flush


def test_events_are_recorded_with_time_keys_and_message() -> None:
    cluster, _ = new_cluster()
    cluster.engine.now = 12 * S
    victim = make_pod("victim", "ns1").obj()
    preemptor = make_pod("high", "ns2").obj()
    rec = cluster.record
    rec.event(victim, "Normal", "Preempted", "Preempting", "Preempted by pod x", preemptor)
    rec.event(preemptor, "Warning", "FailedScheduling", "Scheduling", "0/1 nodes")
    assert [
        (e.time, e.type, e.reason, e.object, e.related, e.message) for e in cluster.record.events
    ] == [
        (12 * S, "Normal", "Preempted", "ns1/victim", "ns2/high", "Preempted by pod x"),
        (12 * S, "Warning", "FailedScheduling", "ns2/high", None, "0/1 nodes"),
    ]


def test_flush_delivers_in_order_to_every_watcher() -> None:
    cluster, first = new_cluster()
    second = Recorder()
    cluster.watchers.append(second)
    cluster.create_node(node("n1"))
    cluster.create_pod(make_pod("p").obj())
    cluster.bind(cluster.pods["default/p"], "n1")
    cluster.create_node(node("n2"))
    assert first.log == []  # nothing is delivered before flush
    assert cluster.flush() == 4
    expected = ["node_add", "pod_add", "pod_update", "node_add"]
    assert first.kinds() == expected
    assert second.kinds() == expected
    assert cluster.flush() == 0


def test_changes_made_by_a_watcher_during_flush_are_delivered_after_the_current_ones() -> None:
    cluster, rec = new_cluster()

    class Creator(Recorder):
        def on_node_add(self, node: Node) -> None:
            cluster.create_pod(make_pod(f"for-{node.name}").obj())

    cluster.watchers.insert(0, Creator())
    cluster.create_node(node("n1"))
    cluster.create_node(node("n2"))
    assert cluster.flush() == 4
    assert [(k, getattr(n, "name", None)) for k, _, n in rec.log] == [
        ("node_add", "n1"),
        ("node_add", "n2"),
        ("pod_add", "for-n1"),
        ("pod_add", "for-n2"),
    ]


# --------------------------------------------------------------------------- --watch lines


def test_watch_lines_follow_pod_changes() -> None:
    cluster, _ = new_cluster(watch=True)
    cluster.create_node(node())
    cluster.create_pod(make_pod("p").obj())
    cluster.flush()
    cluster.engine.now = S
    cluster.bind(cluster.pods["default/p"], "n1")
    cluster.flush()
    lines = [(w.time, w.pod.phase, w.pod.node_name) for w in cluster.record.watch_lines]
    assert lines == [(0, "Pending", ""), (S, "Running", "n1")]


def test_no_watch_lines_without_watch() -> None:
    cluster, _ = new_cluster(watch=False)
    cluster.create_pod(make_pod("p").obj())
    cluster.flush()
    assert cluster.record.watch_lines == []


def test_watch_line_when_a_pod_disappears() -> None:
    cluster, _ = new_cluster(watch=True)
    cluster.create_node(node())
    pod = bound_pod(cluster, grace=30)
    cluster.flush()
    cluster.engine.now = 10 * S
    cluster.delete_gracefully(pod, REASON_DELETED)
    advance(cluster, 40 * S)
    assert [w.time for w in cluster.record.watch_lines] == [0, 0, 10 * S, 40 * S]
