"""The backend-neutral run record (driver/record.py), fed only through the ports:
watch events give each pod's life, the watch lines, the nodes and the storage
objects as they end; the EventRecorder calls give events and preemptions;
``deleting`` gives the reason of a deletion (the first one given for a life)."""

from __future__ import annotations

import pytest

from kubesched.api.storage import PersistentVolume, PersistentVolumeClaim, StorageClass
from kubesched.api.types import Pod
from kubesched.driver.events import (
    Event,
    NodeAdded,
    NodeDeleted,
    NodeUpdated,
    ObjectAdded,
    ObjectDeleted,
    ObjectUpdated,
    PodAdded,
    PodDeleted,
    PodUpdated,
)
from kubesched.driver.record import EventRecord, PreemptionRecord, RunRecord
from kubesched.framework.events import EventResource
from tests.builders import make_node, make_pod

S = 1_000_000_000


class Clock:
    def __init__(self) -> None:
        self.t = 0

    def now(self) -> int:
        return self.t


def new_record(watch: bool = False) -> tuple[RunRecord, Clock]:
    clock = Clock()
    return RunRecord(clock, watch=watch), clock


def changed(pod: Pod, **fields: object) -> Pod:
    new = pod.copy()
    for k, v in fields.items():
        setattr(new, k, v)
    return new


# --------------------------------------------------------------------------- pod lives


def test_a_pod_life_from_its_watch_events() -> None:
    record, clock = new_record()
    pending = make_pod("p").uid("u1").obj()
    clock.t = 1 * S
    PodAdded(pending).to(record)
    bound = changed(pending, node_name="n1", phase="Running")
    clock.t = 3 * S
    PodUpdated(pending, bound).to(record)
    done = changed(bound, phase="Succeeded")
    clock.t = 8 * S
    PodUpdated(bound, done).to(record)
    clock.t = 10 * S
    PodDeleted(done).to(record)

    (life,) = record.lives.values()
    assert (life.created_at, life.scheduled_at, life.finished_at, life.deleted_at) == (
        1 * S,
        3 * S,
        8 * S,
        10 * S,
    )
    assert life.pod is done
    assert life.deletion_reason is None  # nobody said why


def test_a_pod_added_bound_is_scheduled_when_it_appears() -> None:
    record, clock = new_record()
    clock.t = 2 * S
    PodAdded(make_pod("p").uid("u1").node("n1").obj()).to(record)
    assert record.lives["u1"].scheduled_at == 2 * S


def test_only_the_first_binding_and_the_first_finish_count() -> None:
    record, clock = new_record()
    pod = make_pod("p").uid("u1").node("n1").phase("Running").obj()
    PodAdded(pod).to(record)
    clock.t = 5 * S
    relabelled = changed(pod, labels={"a": "b"})
    PodUpdated(pod, relabelled).to(record)  # still on n1: not a new binding
    failed = changed(relabelled, phase="Failed")
    PodUpdated(relabelled, failed).to(record)
    clock.t = 6 * S
    PodUpdated(failed, changed(failed, labels={})).to(record)  # still terminal
    life = record.lives["u1"]
    assert (life.scheduled_at, life.finished_at) == (0, 5 * S)


@pytest.mark.parametrize(
    ("steps", "want"),
    [
        pytest.param(
            ["add", ("deleting", "Preempted"), "delete"],
            "Preempted",
            id="reason given while the pod is known",
        ),
        pytest.param(
            [("deleting", "Deleted"), "add", "delete"],
            "Deleted",
            id="reason given before its add is delivered (created and deleted in one instant)",
        ),
        pytest.param(
            ["add", ("deleting", "Deleted"), ("deleting", "NodeDeleted"), "delete"],
            "Deleted",
            id="the first reason stays (a terminating pod whose node goes)",
        ),
        pytest.param(["add", "delete"], None, id="no reason given"),
    ],
)
def test_deletion_reason(steps: list[object], want: str | None) -> None:
    record, _ = new_record()
    pod = make_pod("p").uid("u1").obj()
    for step in steps:
        if step == "add":
            PodAdded(pod).to(record)
        elif step == "delete":
            PodDeleted(pod).to(record)
        else:
            assert isinstance(step, tuple)
            record.deleting("u1", step[1])
    assert record.lives["u1"].deletion_reason == want


def test_a_reason_after_a_life_ended_belongs_to_the_next_life_of_that_uid() -> None:
    # A dumped pod keeps its uid when it is created again: each life its own reason.
    record, clock = new_record()
    first = make_pod("p").uid("u1").obj()
    PodAdded(first).to(record)
    record.deleting("u1", "Deleted")
    PodDeleted(first).to(record)
    clock.t = 5 * S
    record.deleting("u1", "Preempted")  # the second life, before its add arrives
    second = make_pod("p").uid("u1").obj()
    PodAdded(second).to(record)
    life = record.lives["u1"]
    assert (life.pod, life.created_at, life.deleted_at) == (second, 5 * S, None)
    assert life.deletion_reason == "Preempted"


def test_lives_keep_the_order_pods_appeared_in() -> None:
    record, _ = new_record()
    for name in ("b", "a", "c"):
        PodAdded(make_pod(name).uid(f"u-{name}").obj()).to(record)
    assert [life.pod.name for life in record.lives.values()] == ["b", "a", "c"]


# --------------------------------------------------------------------------- watch lines


@pytest.mark.parametrize("watch", [pytest.param(True, id="--watch"), pytest.param(False, id="no")])
def test_watch_lines_are_one_per_pod_event(watch: bool) -> None:
    record, clock = new_record(watch)
    pod = make_pod("p").uid("u1").obj()
    bound = changed(pod, node_name="n1")
    PodAdded(pod).to(record)
    NodeAdded(make_node("n1").obj()).to(record)  # not a pod: no line
    clock.t = S
    PodUpdated(pod, bound).to(record)
    clock.t = 2 * S
    PodDeleted(bound).to(record)
    lines = [(w.time, w.pod) for w in record.watch_lines]
    assert lines == ([(0, pod), (S, bound), (2 * S, bound)] if watch else [])


# --------------------------------------------------------------------------- nodes, storage


def test_nodes_are_the_ones_that_exist_now() -> None:
    record, _ = new_record()
    n1, n2 = make_node("n1").obj(), make_node("n2").obj()
    n1b = make_node("n1").label("zone", "a").obj()
    events: list[Event] = [NodeAdded(n1), NodeAdded(n2), NodeUpdated(n1, n1b), NodeDeleted(n2)]
    for e in events:
        e.to(record)
    assert record.nodes == {"n1": n1b}


def test_storage_objects_as_they_end() -> None:
    record, _ = new_record()
    assert not record.storage_used
    pvc = PersistentVolumeClaim("data", uid="c1")
    bound = PersistentVolumeClaim("data", uid="c1", volume_name="pv-1", phase="Bound")
    pv = PersistentVolume("pv-1")
    gone = PersistentVolume("pv-2")
    sc = StorageClass("fast", "example.com/csi")
    events: list[Event] = [
        ObjectAdded(EventResource.STORAGE_CLASS, sc),
        ObjectAdded(EventResource.PERSISTENT_VOLUME_CLAIM, pvc),
        ObjectAdded(EventResource.PERSISTENT_VOLUME, pv),
        ObjectAdded(EventResource.PERSISTENT_VOLUME, gone),
        ObjectUpdated(EventResource.PERSISTENT_VOLUME_CLAIM, pvc, bound),
        ObjectDeleted(EventResource.PERSISTENT_VOLUME, gone),
    ]
    for e in events:
        e.to(record)
    assert record.storage_used
    assert record.pvcs == {"default/data": bound}
    assert record.pvs == {"pv-1": pv}


def test_a_storage_class_alone_counts_as_storage_used() -> None:
    record, _ = new_record()
    ObjectAdded(EventResource.STORAGE_CLASS, StorageClass("fast", "x")).to(record)
    assert record.storage_used
    assert (record.pvcs, record.pvs) == ({}, {})


# --------------------------------------------------------------------------- EventRecorder


def test_events_and_preemptions_are_stamped_with_the_clock() -> None:
    record, clock = new_record()
    high = make_pod("high").obj()
    low = make_pod("low", "batch").obj()
    clock.t = 7 * S
    record.event(low, "Normal", "Preempted", "Preempting", "by default/high", related=high)
    record.preemption(high, "n1", [low], 1)
    clock.t = 9 * S
    record.controller_event("ReplicaSet", "default", "web", "Warning", "FailedCreate", "no")
    assert record.events == [
        EventRecord(7 * S, "Normal", "Preempted", "batch/low", "default/high", "by default/high"),
        EventRecord(9 * S, "Warning", "FailedCreate", "default/web", None, "no", "ReplicaSet"),
    ]
    assert record.preemptions == [PreemptionRecord(7 * S, "default/high", "n1", ["batch/low"], 1)]
