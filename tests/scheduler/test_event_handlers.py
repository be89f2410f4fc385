"""Which pending pods a cluster event moves, to which queue, and when.

Each case runs real scheduling cycles on the simulated cluster (``Rig`` from
test_scheduler.py) until the pods of interest sit in the unschedulable pool,
rejected by the plugins the case names, then causes one cluster event and
checks where every pod went: activeQ, backoffQ or still the pool. Cases whose
event happens at t=0 (the time of the pods' only rejection) then check *when*
a pod moved to backoffQ reaches activeQ.

The expected answers come from upstream kube-scheduler v1.36 (queueing hints
on: SchedulerQueueingHints is GA and locked on since v1.34):

- pkg/scheduler/eventhandlers.go: addNodeToCache, updateNodeInCache,
  deleteNodeFromCache, addAssignedPodToCache, updateAssignedPodInCache,
  deleteAssignedPodFromCache, updatePodInSchedulingQueue (with
  hasNominatedNodeNameChanged) and deletePodFromSchedulingQueue, both with
  getLEPriorityPreCheck;
- pkg/scheduler/backend/queue/scheduling_queue.go: movePodsToActiveOrBackoffQueue,
  isPodWorthRequeuing, requeuePodWithQueueingStrategy, Update,
  flushBackoffQCompleted, flushUnschedulablePodsLeftover; backoff_queue.go for
  the backoff arithmetic (1 s doubling to 10 s, expiry truncated to the 1 s
  ordering window, flushed on whole seconds);
- pkg/scheduler/scheduler.go buildQueueingHintMap (a plugin registering
  Node/Add but no UpdateNodeTaint also gets UpdateNodeTaint with the
  always-Queue hint, issue 109437);
- the in-tree plugins' EventsToRegister and hints: NodeResourcesFit
  (isSchedulableAfterPodEvent, isSchedulableAfterNodeChange), NodeAffinity,
  TaintToleration, NodeUnschedulable, PodTopologySpread, InterPodAffinity,
  SchedulingGates.

The simulated cluster has no API for changing a node or a pod's labels or
spec, so ``update_node`` / ``update_pod`` store the new object in the cluster
and deliver the update to the watchers, as an informer would.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Final

import pytest

from kubesched.api.types import Node, Pod, PodCondition, PodSpec
from tests.builders import make_node, make_pod, selector
from tests.scheduler.test_scheduler import Rig

S: Final = 1_000_000_000
"""One second in the simulation's nanoseconds."""

ACTIVE: Final = "activeQ"
BACKOFF: Final = "backoffQ"
POOL: Final = "unschedulablePods"

FIT: Final = frozenset({"NodeResourcesFit"})
NODE_AFFINITY: Final = frozenset({"NodeAffinity"})
TAINTS: Final = frozenset({"TaintToleration"})
CORDONED: Final = frozenset({"NodeUnschedulable"})
POD_AFFINITY: Final = frozenset({"InterPodAffinity"})
GATES: Final = frozenset({"SchedulingGates"})
SPREAD_AND_TAINTS: Final = frozenset({"TaintToleration", "PodTopologySpread"})
FIT_AND_TAINTS: Final = frozenset({"TaintToleration", "NodeResourcesFit"})

HOSTNAME: Final = "kubernetes.io/hostname"


# --------------------------------------------------------------------------- objects


def node(
    name: str,
    cpu: str = "4",
    *,
    taint: str = "",
    unschedulable: bool = False,
    **labels: str,
) -> Node:
    b = make_node(name).capacity(cpu=cpu, memory="8Gi", pods=20).unschedulable(unschedulable)
    if taint:
        b.taint(taint)
    for k, v in labels.items():
        b.label(k, v)
    return b.obj()


def bound(name: str, node_name: str, cpu: str = "100m", **labels: str) -> Pod:
    """A running pod no pending pod of these tests may preempt (priority 1000),
    deleted at once (grace 0)."""
    return (
        make_pod(name).priority(1000).req(cpu=cpu).labels(**labels).node(node_name).grace(0).obj()
    )


# --------------------------------------------------------------------------- the queue


def where(rig: Rig, name: str) -> str:
    q = rig.sched.queue
    key = f"default/{name}"
    for queue, pods in (
        (ACTIVE, q.pods_in_active_q()),
        (BACKOFF, q.pods_in_backoff_q()),
        (POOL, q.unschedulable_pods()),
    ):
        if any(p.key == key for p in pods):
            return queue
    return "nowhere"


def places(rig: Rig, names: Mapping[str, object]) -> dict[str, str]:
    return {n: where(rig, n) for n in names}


def rejectors(rig: Rig, name: str) -> frozenset[str]:
    qpi = rig.sched.queue.get_pod(name, "default")
    assert qpi is not None, name
    return frozenset(qpi.rejector_plugins())


def drain(rig: Rig) -> None:
    """One scheduling cycle per pod in activeQ (never popping backoffQ, which
    ``pop`` does when activeQ is empty)."""
    while rig.sched.queue.pods_in_active_q():
        rig.cycle()


def advance(rig: Rig, to: int) -> None:
    """Move the clock to ``to``, running the queue's timers at every whole second
    on the way: upstream's backoff flush ticks on whole seconds and its leftover
    flush every 30 s from the queue's start (t=0), also a whole second."""
    for second in range(rig.engine.now // S + 1, to // S + 1):
        rig.engine.now = second * S
        rig.sched.on_timer()
        rig.cluster.flush()
    rig.engine.now = to


# --------------------------------------------------------------------------- updates


def update_node(rig: Rig, new: Node) -> None:
    old = rig.cluster.nodes[new.name]
    new.creation_timestamp = old.creation_timestamp
    rig.cluster.nodes[new.name] = new
    for w in rig.cluster.watchers:
        w.on_node_update(old, new)


def update_pod(
    rig: Rig, name: str, *, labels: Mapping[str, str] | None = None, spec: PodSpec | None = None
) -> None:
    old = rig.pod(name)
    new = old.copy()
    if labels is not None:
        new.labels = dict(labels)
    if spec is not None:
        new.spec = spec
    rig.cluster.pods[new.key] = new
    for w in rig.cluster.watchers:
        w.on_pod_update(old, new)


# --------------------------------------------------------------------------- events

Event = Callable[[Rig], None]


def create_node(n: Node) -> Event:
    return lambda rig: rig.cluster.create_node(n)


def delete_node(name: str) -> Event:
    return lambda rig: rig.cluster.delete_node(name)


def change_node(n: Node) -> Event:
    return lambda rig: update_node(rig, n)


def create_pod(p: Pod) -> Event:
    return lambda rig: rig.cluster.create_pod(p)


def delete_pod(name: str) -> Event:
    return lambda rig: rig.cluster.delete_gracefully(rig.pod(name), "test")


def set_nomination(name: str, node_name: str) -> Event:
    return lambda rig: rig.cluster.patch_pod_status(rig.pod(name), nominated_node_name=node_name)


def set_condition_message(name: str, message: str) -> Event:
    cond = PodCondition("PodScheduled", "False", "Unschedulable", message)
    return lambda rig: rig.cluster.patch_pod_status(rig.pod(name), condition=cond)


def relabel(name: str, **labels: str) -> Event:
    return lambda rig: update_pod(rig, name, labels=labels)


def resize(name: str, **res: str) -> Event:
    # kubesched pods carry no status resources, so upstream's PodRequests with
    # UseStatusResources reads the spec, as here.
    return lambda rig: update_pod(rig, name, spec=make_pod("x").req(**res).obj().spec)


def remove_gates(name: str, *keep: str) -> Event:
    def event(rig: Rig) -> None:
        update_pod(rig, name, spec=replace(rig.pod(name).spec, scheduling_gates=keep))

    return event


def schedule_new_pod(p: Pod) -> Event:
    """Create a pending pod and run its (successful) scheduling cycle: the
    binding reaches the scheduler as a pending -> bound update."""

    def event(rig: Rig) -> None:
        rig.pods(p)
        assert rig.cycle()
        assert rig.pod(p.name).node_name

    return event


def finish_running_pods(rig: Rig) -> None:
    """Run the cluster's due actions (pods created with ``run_for`` succeed)."""
    rig.engine.run_due()


# --------------------------------------------------------------------------- setups

Setup = Callable[[Rig], None]


def nomination_setup(nominated: bool) -> Setup:
    """n1 (4 cpu) runs ``victim`` (3 cpu, priority 0, 30 s grace); n2 has 1 cpu.
    Every pending pod but ``sel`` asks 3 cpu, more than any node has free:
    NodeResourcesFit. ``sel`` selects a zone no node has: NodeAffinity.

    When ``nominated``, ``nom`` (priority 10) preempts ``victim``, which stays
    terminating on n1, and gets status.nominatedNodeName n1 the upstream way.
    (A nominated pod whose preemption finds no candidate would clear its own
    nomination: Evaluator.Preempt returns NewPostFilterResultWithNominatedNode("").)
    Every other pod has preemptionPolicy Never, so nobody else is nominated."""

    def setup(rig: Rig) -> None:
        rig.nodes(node("n1", cpu="4"), node("n2", cpu="1"))
        rig.pods(make_pod("victim").priority(0).req(cpu="3").node("n1").obj())

        def pending(name: str, priority: int) -> Pod:
            return make_pod(name).priority(priority).req(cpu="3").preemption_policy("Never").obj()

        nom = make_pod("nom").priority(10).req(cpu="3")
        if not nominated:
            nom.preemption_policy("Never")
        rig.pods(
            nom.obj(),
            pending("high", 20),
            pending("equal", 10),
            pending("low", 5),
            make_pod("sel").priority(5).node_selector(zone="z").preemption_policy("Never").obj(),
        )
        drain(rig)
        assert rig.pod("nom").nominated_node_name == ("n1" if nominated else "")
        assert (rig.pod("victim").deletion_timestamp is not None) == nominated

    return setup


def topology_setup(rig: Rig) -> None:
    """n1 (zone a, rack r1) runs two app=web and two app=db pods; n2 (zone b, no
    rack) and n3 (rack r2, no zone) carry a NoSchedule taint.

    - ``spread`` (app=web, zone maxSkew 1): on n1 the skew would be 2+1-0 > 1
      (zone b counts, nodeTaintsPolicy Ignore); n2, n3 untolerated.
    - ``rackspread`` (app=db, rack maxSkew 1): same on n1 with rack r2 at 0.
    - ``fat`` (10 cpu) tolerates the taint: NodeResourcesFit everywhere.
    """
    rig.nodes(
        node("n1", zone="a", rack="r1"),
        node("n2", taint="dedicated", zone="b"),
        node("n3", taint="dedicated", rack="r2"),
    )
    rig.pods(
        bound("w1", "n1", app="web"),
        bound("w2", "n1", app="web"),
        bound("d1", "n1", app="db"),
        bound("d2", "n1", app="db"),
    )
    rig.pods(
        make_pod("spread")
        .label("app", "web")
        .req(cpu="100m")
        .spread(1, "zone", "DoNotSchedule", selector(app="web"))
        .obj(),
        make_pod("rackspread")
        .label("app", "db")
        .req(cpu="100m")
        .spread(1, "rack", "DoNotSchedule", selector(app="db"))
        .obj(),
        make_pod("fat")
        .req(cpu="10")
        .toleration("dedicated", operator="Exists", effect="NoSchedule")
        .obj(),
    )


def small_node_setup(rig: Rig) -> None:
    """n1 has 2 cpu; ``p`` asks 3, ``q`` asks 6: NodeResourcesFit."""
    rig.nodes(node("n1", cpu="2"))
    rig.pods(make_pod("p").req(cpu="3").obj(), make_pod("q").req(cpu="6").obj())


def zone_setup(rig: Rig) -> None:
    """n1 is in zone a; ``za`` selects zone b, ``zc`` zone c: NodeAffinity."""
    rig.nodes(node("n1", zone="a"))
    rig.pods(
        make_pod("za").node_selector(zone="b").obj(), make_pod("zc").node_selector(zone="c").obj()
    )


def taint_setup(rig: Rig) -> None:
    """n1 is tainted ``a``; ``t`` tolerates nothing, ``tb`` tolerates ``b`` only."""
    rig.nodes(node("n1", taint="a"))
    rig.pods(
        make_pod("t").obj(),
        make_pod("tb").toleration("b", operator="Exists", effect="NoSchedule").obj(),
    )


def cordoned_setup(rig: Rig) -> None:
    rig.nodes(node("n1", unschedulable=True))
    rig.pods(make_pod("u").obj())


def hog_setup(run_for: int | None = None) -> Setup:
    """n1 (4 cpu) runs ``hog`` (3 cpu, 1Gi); ``p`` asks 2 cpu (NodeResourcesFit),
    ``sel`` selects a missing zone (NodeAffinity)."""

    def setup(rig: Rig) -> None:
        rig.nodes(node("n1", cpu="4"))
        hog = make_pod("hog").priority(1000).req(cpu="3", memory="1Gi").node("n1").grace(0)
        rig.cluster.create_pod(hog.obj(), run_for=run_for)
        rig.cluster.flush()
        rig.pods(make_pod("p").req(cpu="2").obj(), make_pod("sel").node_selector(zone="z").obj())

    return setup


def affinity_setup(rig: Rig) -> None:
    """n1 (zone a) runs ``other`` (app=cache). ``aff`` requires an app=db pod in
    its zone and there is none: InterPodAffinity. ``fat`` (10 cpu): NodeResourcesFit."""
    rig.nodes(node("n1", zone="a"))
    rig.pods(bound("other", "n1", app="cache"))
    rig.pods(
        make_pod("aff").label("app", "web").pod_affinity("zone", selector(app="db")).obj(),
        make_pod("fat").req(cpu="10").obj(),
    )


def anti_affinity_setup(rig: Rig) -> None:
    """n1 runs ``e`` (app=x); ``anti`` refuses any app=x pod on its node:
    InterPodAffinity."""
    rig.nodes(node("n1"))
    rig.pods(bound("e", "n1", app="x"))
    rig.pods(make_pod("anti").pod_affinity(HOSTNAME, selector(app="x"), anti=True).obj())


def gated_setup(*gates: str) -> Setup:
    """``g`` carries scheduling gates: PreEnqueue (SchedulingGates) keeps it in
    the pool without any scheduling attempt."""

    def setup(rig: Rig) -> None:
        rig.nodes(node("n1"))
        rig.pods(make_pod("g").scheduling_gates(*gates).obj())

    return setup


# --------------------------------------------------------------------------- cases


@dataclass(frozen=True)
class Case:
    setup: Setup
    event: Event
    expect: Mapping[str, tuple[frozenset[str], str]]
    """pod -> (its rejector plugins before the event, the queue it is in after)."""
    at: int = 0
    """When the event happens (every rejection happens at t=0)."""


CASES = [
    # ------------------------------------------------ deletePodFromSchedulingQueue
    pytest.param(
        Case(
            nomination_setup(nominated=True),
            delete_pod("nom"),
            {
                # getLEPriorityPreCheck(10): 20 > 10, never offered the event.
                "high": (FIT, POOL),
                # Offered AssignedPodDelete of nom; NodeResourcesFit's hint queues
                # the deletion of a nominated pod; still backing off -> backoffQ.
                "equal": (FIT, BACKOFF),
                "low": (FIT, BACKOFF),
                # NodeAffinity registers no pod event.
                "sel": (NODE_AFFINITY, POOL),
            },
        ),
        id="deletePodFromSchedulingQueue: deleting a nominated pod requeues "
        "equal- and lower-priority pods NodeResourcesFit rejected",
    ),
    pytest.param(
        Case(
            nomination_setup(nominated=True),
            delete_pod("nom"),
            {
                "high": (FIT, POOL),
                # Their 1 s backoff (expiry truncate(0 + 1 s) = 1 s) is over at 5 s.
                "equal": (FIT, ACTIVE),
                "low": (FIT, ACTIVE),
                "sel": (NODE_AFFINITY, POOL),
            },
            at=5 * S,
        ),
        id="deletePodFromSchedulingQueue: after the backoff, a nominated pod's "
        "deletion sends LE-priority pods straight to activeQ",
    ),
    pytest.param(
        Case(
            nomination_setup(nominated=False),
            delete_pod("nom"),
            {
                # No MoveAllToActiveOrBackoffQueue at all without a nomination.
                "high": (FIT, POOL),
                "equal": (FIT, POOL),
                "low": (FIT, POOL),
                "sel": (NODE_AFFINITY, POOL),
            },
        ),
        id="deletePodFromSchedulingQueue: deleting a pending pod without a nomination moves nobody",
    ),
    # ------------------------------------------------ updatePodInSchedulingQueue
    pytest.param(
        Case(
            nomination_setup(nominated=True),
            set_nomination("nom", ""),
            {
                # nom itself passes getLEPriorityPreCheck (10 <= 10) and the
                # event's old object is nominated: NodeResourcesFit queues it too
                # (Update alone would not: a status change is the general
                # UnscheduledPodUpdate, which NodeResourcesFit did not register).
                "nom": (FIT, BACKOFF),
                "high": (FIT, POOL),
                "equal": (FIT, BACKOFF),
                "low": (FIT, BACKOFF),
                "sel": (NODE_AFFINITY, POOL),
            },
        ),
        id="updatePodInSchedulingQueue/hasNominatedNodeNameChanged: clearing a "
        "pending pod's nominatedNodeName requeues LE-priority pods",
    ),
    pytest.param(
        Case(
            nomination_setup(nominated=True),
            set_nomination("nom", "n2"),
            {
                "nom": (FIT, BACKOFF),
                "high": (FIT, POOL),
                "equal": (FIT, BACKOFF),
                "low": (FIT, BACKOFF),
                "sel": (NODE_AFFINITY, POOL),
            },
        ),
        id="updatePodInSchedulingQueue/hasNominatedNodeNameChanged: changing a "
        "pending pod's nominatedNodeName requeues LE-priority pods",
    ),
    pytest.param(
        Case(
            nomination_setup(nominated=False),
            set_nomination("nom", "n1"),
            {
                # hasNominatedNodeNameChanged needs an old nomination.
                "nom": (FIT, POOL),
                "high": (FIT, POOL),
                "equal": (FIT, POOL),
                "low": (FIT, POOL),
                "sel": (NODE_AFFINITY, POOL),
            },
        ),
        id="updatePodInSchedulingQueue/hasNominatedNodeNameChanged: setting a "
        "nomination where there was none moves nobody",
    ),
    pytest.param(
        Case(
            nomination_setup(nominated=True),
            set_condition_message("nom", "something else"),
            {
                "nom": (FIT, POOL),
                "high": (FIT, POOL),
                "equal": (FIT, POOL),
                "low": (FIT, POOL),
                "sel": (NODE_AFFINITY, POOL),
            },
        ),
        id="updatePodInSchedulingQueue/hasNominatedNodeNameChanged: a status "
        "update keeping the nomination moves nobody",
    ),
    # ------------------------------------------------ deleteNodeFromCache
    pytest.param(
        Case(
            topology_setup,
            delete_node("n2"),
            {
                # n2 had the constraint's key (zone): PodTopologySpread queues.
                "spread": (SPREAD_AND_TAINTS, BACKOFF),
                # n2 has no rack label: Skip.
                "rackspread": (SPREAD_AND_TAINTS, POOL),
                # Neither NodeResourcesFit nor TaintToleration registers NodeDelete.
                "fat": (FIT, POOL),
            },
        ),
        id="deleteNodeFromCache: NodeDelete requeues pods PodTopologySpread rejected "
        "whose topology key the node had, not NodeResourcesFit-rejected ones",
    ),
    pytest.param(
        Case(
            topology_setup,
            delete_node("n3"),
            {
                "spread": (SPREAD_AND_TAINTS, POOL),  # n3 has no zone label
                "rackspread": (SPREAD_AND_TAINTS, BACKOFF),  # n3 had rack
                "fat": (FIT, POOL),
            },
        ),
        id="deleteNodeFromCache: NodeDelete of a node without the zone key "
        "leaves a zone-spread pod in the pool",
    ),
    # ------------------------------------------------ addNodeToCache
    pytest.param(
        Case(
            small_node_setup,
            create_node(node("n2", cpu="4")),
            {
                "p": (FIT, BACKOFF),  # 3 cpu fit an empty 4-cpu node
                "q": (FIT, POOL),  # 6 cpu do not: isSchedulableAfterNodeChange Skip
            },
        ),
        id="addNodeToCache: NodeAdd requeues the NodeResourcesFit-rejected pod the "
        "node fits, not the one it is too small for",
    ),
    pytest.param(
        Case(
            zone_setup,
            create_node(node("n2", zone="c")),
            {"za": (NODE_AFFINITY, POOL), "zc": (NODE_AFFINITY, BACKOFF)},
        ),
        id="addNodeToCache: NodeAdd requeues only the NodeAffinity-rejected pod "
        "whose selector the new node matches",
    ),
    # ------------------------------------------------ updateNodeInCache
    pytest.param(
        Case(
            small_node_setup,
            change_node(node("n1", cpu="4")),
            {"p": (FIT, BACKOFF), "q": (FIT, POOL)},
        ),
        id="updateNodeInCache: UpdateNodeAllocatable growing cpu requeues the "
        "NodeResourcesFit-rejected pod that now fits",
    ),
    pytest.param(
        Case(
            small_node_setup,
            change_node(node("n1", cpu="1")),
            {"p": (FIT, POOL), "q": (FIT, POOL)},
        ),
        id="updateNodeInCache: UpdateNodeAllocatable shrinking cpu moves nobody",
    ),
    pytest.param(
        Case(
            small_node_setup,
            change_node(node("n1", cpu="2", taint="new")),
            # NodeResourcesFit registers Node/Add but not UpdateNodeTaint, so
            # buildQueueingHintMap gives it UpdateNodeTaint with the always-Queue
            # hint (issue 109437): any taint change requeues its pods.
            {"p": (FIT, BACKOFF), "q": (FIT, BACKOFF)},
        ),
        id="updateNodeInCache: UpdateNodeTaint requeues NodeResourcesFit-rejected "
        "pods through the default hint of the issue-109437 mitigation",
    ),
    pytest.param(
        Case(
            small_node_setup,
            change_node(node("n1", cpu="2", unschedulable=True)),
            # NodeSchedulingPropertiesChange reports spec.unschedulable only when
            # it turns false: cordoning is no event at all.
            {"p": (FIT, POOL), "q": (FIT, POOL)},
        ),
        id="updateNodeInCache: cordoning a node is no event and moves nobody",
    ),
    pytest.param(
        Case(
            zone_setup,
            change_node(node("n1", zone="b")),
            {"za": (NODE_AFFINITY, BACKOFF), "zc": (NODE_AFFINITY, POOL)},
        ),
        id="updateNodeInCache: UpdateNodeLabel requeues the NodeAffinity-rejected "
        "pod the node now matches",
    ),
    pytest.param(
        Case(
            taint_setup,
            change_node(node("n1")),
            {"t": (TAINTS, BACKOFF), "tb": (TAINTS, BACKOFF)},
        ),
        id="updateNodeInCache: UpdateNodeTaint removing the taint requeues "
        "TaintToleration-rejected pods",
    ),
    pytest.param(
        Case(
            taint_setup,
            change_node(node("n1", taint="b")),
            # Untolerated before and after for t; tolerated now for tb.
            {"t": (TAINTS, POOL), "tb": (TAINTS, BACKOFF)},
        ),
        id="updateNodeInCache: UpdateNodeTaint replacing the taint requeues only "
        "the pod that tolerates the new one",
    ),
    pytest.param(
        Case(cordoned_setup, change_node(node("n1")), {"u": (CORDONED, BACKOFF)}),
        id="updateNodeInCache: spec.unschedulable turning false (reported as "
        "UpdateNodeTaint) requeues the NodeUnschedulable-rejected pod",
    ),
    # ------------------------------------------------ deleteAssignedPodFromCache
    pytest.param(
        Case(
            hog_setup(),
            delete_pod("hog"),
            {"p": (FIT, BACKOFF), "sel": (NODE_AFFINITY, POOL)},
        ),
        id="deleteAssignedPodFromCache: deleting a bound pod requeues the "
        "NodeResourcesFit-rejected pod",
    ),
    pytest.param(
        Case(
            hog_setup(run_for=5 * S),
            finish_running_pods,
            # The pod informer only lists non-terminal pods: a pod turning
            # Succeeded reaches the scheduler as a delete. Backoff over at 5 s.
            {"p": (FIT, ACTIVE), "sel": (NODE_AFFINITY, POOL)},
            at=5 * S,
        ),
        id="deleteAssignedPodFromCache: a bound pod that Succeeded frees room "
        "for the NodeResourcesFit-rejected pod",
    ),
    pytest.param(
        Case(anti_affinity_setup, delete_pod("e"), {"anti": (POD_AFFINITY, BACKOFF)}),
        id="deleteAssignedPodFromCache: deleting the bound pod a pending pod's "
        "anti-affinity refused requeues it",
    ),
    # ------------------------------------------------ addAssignedPodToCache
    pytest.param(
        Case(
            affinity_setup,
            create_pod(bound("db1", "n1", app="db")),
            {"aff": (POD_AFFINITY, BACKOFF), "fat": (FIT, POOL)},
        ),
        id="addAssignedPodToCache: a bound pod matching a pending pod's required "
        "pod affinity requeues it",
    ),
    pytest.param(
        Case(
            affinity_setup,
            schedule_new_pod(make_pod("db1").label("app", "db").obj()),
            {"aff": (POD_AFFINITY, BACKOFF), "fat": (FIT, POOL)},
        ),
        id="addAssignedPodToCache: the binding (pending -> bound update) of a "
        "matching pod requeues the pod-affinity pod",
    ),
    pytest.param(
        Case(
            affinity_setup,
            create_pod(bound("cache2", "n1", app="cache")),
            {"aff": (POD_AFFINITY, POOL), "fat": (FIT, POOL)},
        ),
        id="addAssignedPodToCache: an unrelated bound pod moves nobody",
    ),
    # ------------------------------------------------ updateAssignedPodInCache
    pytest.param(
        Case(
            hog_setup(),
            resize("hog", cpu="1", memory="1Gi"),
            {"p": (FIT, BACKOFF), "sel": (NODE_AFFINITY, POOL)},
        ),
        id="updateAssignedPodInCache: UpdatePodScaleDown of cpu requeues the "
        "NodeResourcesFit-rejected pod asking cpu",
    ),
    pytest.param(
        Case(
            hog_setup(),
            resize("hog", cpu="3", memory="512Mi"),
            # A scale-down, but of memory, which p does not request: Skip.
            {"p": (FIT, POOL), "sel": (NODE_AFFINITY, POOL)},
        ),
        id="updateAssignedPodInCache: UpdatePodScaleDown of a resource the pod "
        "does not request moves nobody",
    ),
    pytest.param(
        Case(
            hog_setup(),
            relabel("hog", app="other"),
            {"p": (FIT, POOL), "sel": (NODE_AFFINITY, POOL)},
        ),
        id="updateAssignedPodInCache: UpdatePodLabel of a bound pod does not "
        "requeue NodeResourcesFit-rejected pods",
    ),
    pytest.param(
        Case(
            affinity_setup,
            relabel("other", app="db"),
            {"aff": (POD_AFFINITY, BACKOFF), "fat": (FIT, POOL)},
        ),
        id="updateAssignedPodInCache: UpdatePodLabel making a bound pod match a "
        "pending pod's required affinity requeues it",
    ),
    pytest.param(
        Case(anti_affinity_setup, relabel("e", app="y"), {"anti": (POD_AFFINITY, BACKOFF)}),
        id="updateAssignedPodInCache: UpdatePodLabel making a bound pod stop "
        "matching a pending pod's required anti-affinity requeues it",
    ),
    # ------------------------------------------------ SchedulingGates
    pytest.param(
        Case(
            gated_setup("example.com/gate"),
            remove_gates("g"),
            # Never attempted: no backoff owed, so straight to activeQ.
            {"g": (GATES, ACTIVE)},
        ),
        id="updatePodInSchedulingQueue: UpdatePodSchedulingGatesEliminated moves "
        "the gated pod to activeQ",
    ),
    pytest.param(
        Case(
            gated_setup("example.com/a", "example.com/b"),
            remove_gates("g", "example.com/b"),
            # A gate remains: no GatesEliminated event, PreEnqueue still gates.
            {"g": (GATES, POOL)},
        ),
        id="updatePodInSchedulingQueue: removing one of two scheduling gates keeps the pod gated",
    ),
    pytest.param(
        Case(gated_setup("example.com/gate"), relabel("g", app="x"), {"g": (GATES, POOL)}),
        id="updatePodInSchedulingQueue: UpdatePodLabel of a gated pod keeps it gated",
    ),
    pytest.param(
        Case(gated_setup("example.com/gate"), create_node(node("n2")), {"g": (GATES, POOL)}),
        id="addNodeToCache: NodeAdd does not move a gated pod",
    ),
]


@pytest.mark.parametrize("case", CASES)
def test_cluster_event_moves_pending_pods(case: Case) -> None:
    rig = Rig()
    case.setup(rig)
    drain(rig)
    assert rig.engine.now == 0
    before = {n: (rejectors(rig, n), where(rig, n)) for n in case.expect}
    assert before == {n: (plugins, POOL) for n, (plugins, _) in case.expect.items()}

    advance(rig, case.at)
    case.event(rig)
    rig.cluster.flush()
    want = {n: queue for n, (_, queue) in case.expect.items()}
    assert places(rig, case.expect) == want

    if case.at == 0:
        # Every pod was rejected once, at 0: a 1 s backoff with expiry
        # truncate(0 + 1 s) = 1 s, still "backing off" during the window [1 s, 2 s),
        # so the flush at 1 s keeps it and the flush at 2 s moves it to activeQ.
        advance(rig, 1 * S)
        assert places(rig, case.expect) == want
        advance(rig, 2 * S)
        assert places(rig, case.expect) == {
            n: ACTIVE if q == BACKOFF else q for n, q in want.items()
        }


# --------------------------------------------------------------------------- timers

# (rejection number, when it happens, when the backoff flush moves the pod to activeQ).
# Backoff = min(1 s << (n-1), 10 s); expiry = truncate(rejected_at + backoff, 1 s);
# the pod backs off while expiry >= truncate(now, 1 s), so the first whole-second
# flush that moves it is expiry + 1 s. The pod is retried as soon as it is back.
BACKOFF_LADDER: Final = [
    (1, S // 2, 2 * S),  # 1 s: truncate(1.5 s) = 1 s -> 2 s
    (2, 2 * S, 5 * S),  # 2 s: 4 s -> 5 s
    (3, 5 * S, 10 * S),  # 4 s: 9 s -> 10 s
    (4, 10 * S, 19 * S),  # 8 s: 18 s -> 19 s
    (5, 19 * S, 30 * S),  # 16 s capped at 10 s: 29 s -> 30 s
    (6, 30 * S, 41 * S),  # 10 s (the cap): 40 s -> 41 s
]


@pytest.mark.parametrize(
    "rungs",
    [
        pytest.param(1, id="flushBackoffQCompleted: 1st rejection at 0.5 s waits until 2 s"),
        pytest.param(2, id="flushBackoffQCompleted: 2nd rejection doubles the backoff to 2 s"),
        pytest.param(3, id="flushBackoffQCompleted: 3rd rejection backs off 4 s"),
        pytest.param(4, id="flushBackoffQCompleted: 4th rejection backs off 8 s"),
        pytest.param(5, id="flushBackoffQCompleted: 5th rejection is capped at 10 s"),
        pytest.param(6, id="flushBackoffQCompleted: 6th rejection stays at the 10 s cap"),
    ],
)
def test_backoff_doubles_to_the_cap_and_flushes_on_whole_seconds(rungs: int) -> None:
    rig = Rig()
    rig.nodes(node("n1", cpu="1"))
    rig.pods(make_pod("p").req(cpu="2").obj())
    for count, rejected_at, moves_at in BACKOFF_LADDER[:rungs]:
        advance(rig, rejected_at)
        assert where(rig, "p") == ACTIVE
        assert rig.cycle()
        qpi = rig.sched.queue.get_pod("p", "default")
        assert qpi is not None
        assert (where(rig, "p"), qpi.unschedulable_count) == (POOL, count)
        # A node big enough but with a taint p does not tolerate: NodeResourcesFit's
        # NodeAdd hint says Queue, TaintToleration's Skip; p is backing off -> backoffQ.
        rig.cluster.create_node(node(f"t{count}", cpu="8", taint="dedicated"))
        rig.cluster.flush()
        assert where(rig, "p") == BACKOFF
        assert rig.sched.next_timer_deadline() == moves_at
        advance(rig, moves_at - S)
        assert where(rig, "p") == BACKOFF
        advance(rig, moves_at)
        assert where(rig, "p") == ACTIVE


@pytest.mark.parametrize(
    ("rejected_at", "moves_at"),
    [
        # Ticks at 0, 30 s, 60 s, ...; a pod moves at the first tick more than
        # 5 min (strictly) after its rejection.
        pytest.param(
            0,
            330 * S,
            id="flushUnschedulablePodsLeftover: rejected at 0 s, 300 s is not more "
            "than 5 min, so the 330 s tick moves it",
        ),
        pytest.param(
            29 * S + S // 2,
            330 * S,
            id="flushUnschedulablePodsLeftover: rejected at 29.5 s, moved at 330 s",
        ),
        pytest.param(
            30 * S,
            360 * S,
            id="flushUnschedulablePodsLeftover: rejected at 30 s, exactly 5 min at "
            "330 s is not enough, moved at 360 s",
        ),
    ],
)
def test_leftover_flush_moves_pods_older_than_five_minutes(rejected_at: int, moves_at: int) -> None:
    rig = Rig()
    rig.nodes(node("n1", cpu="1"))
    # Gated at 0: SchedulingGates did not register UnschedulableTimeout, so the
    # leftover flush never moves it (movePodsToActiveOrBackoffQueue skips it).
    rig.pods(make_pod("g").scheduling_gates("example.com/gate").obj())
    advance(rig, rejected_at)
    rig.pods(make_pod("p").req(cpu="2").obj())
    assert rig.cycle()
    assert places(rig, {"p": 0, "g": 0}) == {"p": POOL, "g": POOL}
    assert rejectors(rig, "p") == FIT
    assert rig.sched.next_timer_deadline() == moves_at
    advance(rig, moves_at - S)
    assert places(rig, {"p": 0, "g": 0}) == {"p": POOL, "g": POOL}
    advance(rig, moves_at)
    # UnschedulableTimeout is a wildcard event: queue after backoff, long over.
    assert places(rig, {"p": 0, "g": 0}) == {"p": ACTIVE, "g": POOL}
    advance(rig, moves_at + 60 * S)
    assert where(rig, "g") == POOL
