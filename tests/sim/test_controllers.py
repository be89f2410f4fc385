"""The ReplicaSet controller of the simulation (sim/controllers.py).

Upstream behaviour re-expressed (pkg/controller/replicaset): a ReplicaSet keeps
``replicas`` *active* pods, where a pod with a deletionTimestamp or in phase
Succeeded/Failed is not active (controller.FilterActivePods), so its
replacement is created at once; pods are named ``<replicaset>-<5 characters>``
from utilrand's alphabet (apiserver generateName); pods it does not control are
none of its business.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable

import pytest

from kubesched.api.types import OwnerReference, Pod, PodSpec
from kubesched.sim.controllers import (
    ALPHANUMS,
    ReplicaSetController,
    ReplicaSetSpec,
    random_suffix,
    template_hash,
)
from tests.builders import make_pod

# k8s.io/apimachinery/pkg/util/rand: no vowels, no confusable characters.
UPSTREAM_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"
SUFFIX = f"[{UPSTREAM_ALPHANUMS}]{{5}}"


class Harness:
    """A controller whose create_pod records what it was asked to create."""

    def __init__(self, seed: int = 0) -> None:
        self.created: list[tuple[Pod, int | None]] = []
        self.uids = 0
        self.rsc = ReplicaSetController(self._create, random.Random(seed))

    def _create(self, pod: Pod, run_for: int | None) -> None:
        self.uids += 1
        pod.uid = f"uid-{self.uids}"
        self.created.append((pod, run_for))

    def add(self, name: str = "web", replicas: int = 2, run_for: int | None = None) -> str:
        spec = PodSpec()

        def make(pod_name: str) -> Pod:
            return Pod(pod_name, "prod", labels={"app": name}, spec=spec)

        uid = f"rs-{name}"
        self.rsc.add(
            ReplicaSetSpec(
                namespace="prod",
                name=name,
                uid=uid,
                replicas=replicas,
                labels={"app": name},
                annotations={},
                spec=spec,
                make_pod=make,
                run_for=run_for,
            )
        )
        return uid

    def names(self) -> list[str]:
        return [p.name for p, _ in self.created]


def terminating(pod: Pod) -> Pod:
    new = pod.copy()
    new.deletion_timestamp = 0
    return new


def with_phase(pod: Pod, phase: str) -> Pod:
    new = pod.copy()
    new.phase = phase
    return new


def test_alphabet_is_upstreams() -> None:
    assert ALPHANUMS == UPSTREAM_ALPHANUMS


def test_random_suffix_is_seeded() -> None:
    a = random_suffix(random.Random(3))
    assert re.fullmatch(SUFFIX, a)
    assert a == random_suffix(random.Random(3))
    assert len({random_suffix(random.Random(s)) for s in range(20)}) > 1


def test_template_hash_is_stable_and_safe() -> None:
    h = template_hash("default/nginx")
    assert h == template_hash("default/nginx")
    assert h != template_hash("default/other")
    assert re.fullmatch(f"[{UPSTREAM_ALPHANUMS}]+", h)
    # upstream's pod-template-hash is a uint32 in decimal, encoded: at most 10 characters
    assert 1 <= len(h) <= 10


def test_add_creates_replicas_with_generated_names_and_owner() -> None:
    h = Harness()
    uid = h.add("web", replicas=3, run_for=42)
    assert len(h.created) == 3
    assert len(set(h.names())) == 3
    for pod, run_for in h.created:
        assert re.fullmatch(f"web-{SUFFIX}", pod.name), pod.name
        assert pod.namespace == "prod"
        assert pod.controller_ref() == OwnerReference("apps/v1", "ReplicaSet", "web", uid, True)
        assert run_for == 42


def test_names_depend_only_on_the_seed() -> None:
    a, b, c = Harness(seed=1), Harness(seed=1), Harness(seed=2)
    for h in (a, b, c):
        h.add("web", replicas=3)
    assert a.names() == b.names()
    assert a.names() != c.names()


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(terminating, id="a pod that starts terminating is replaced at once"),
        pytest.param(lambda p: with_phase(p, "Succeeded"), id="a Succeeded pod is replaced"),
        pytest.param(lambda p: with_phase(p, "Failed"), id="a Failed pod is replaced"),
    ],
)
def test_inactive_pod_is_replaced_once(change: Callable[[Pod], Pod]) -> None:
    h = Harness()
    h.add("web", replicas=2)
    old = h.created[0][0]
    new = change(old)
    h.rsc.on_pod_update(old, new)
    assert len(h.created) == 3
    replacement = h.created[2][0]
    assert replacement.name not in h.names()[:2]
    assert re.fullmatch(f"web-{SUFFIX}", replacement.name)
    # Later events about the same pod (more updates, its final deletion) replace nothing more.
    h.rsc.on_pod_update(new, new)
    h.rsc.on_pod_delete(new)
    assert len(h.created) == 3


def test_a_running_pod_update_is_not_a_replacement() -> None:
    h = Harness()
    h.add("web", replicas=1)
    pod = h.created[0][0]
    bound = pod.copy()
    bound.node_name = "n1"
    bound.phase = "Running"
    h.rsc.on_pod_update(pod, bound)
    assert len(h.created) == 1


def test_deleted_pod_is_replaced() -> None:
    h = Harness()
    h.add("web", replicas=1)
    h.rsc.on_pod_delete(h.created[0][0])
    assert len(h.created) == 2


@pytest.mark.parametrize(
    "pod",
    [
        pytest.param(make_pod("loose").uid("x").obj(), id="a pod without a controller"),
        pytest.param(
            make_pod("other").owner("ReplicaSet", "other", "rs-unknown").obj(),
            id="a pod of a ReplicaSet the controller does not manage",
        ),
        pytest.param(
            make_pod("sts-0").owner("StatefulSet", "sts", "rs-web").obj(),
            id="a pod whose controller is not a ReplicaSet",
        ),
    ],
)
def test_pods_it_does_not_control_are_ignored(pod: Pod) -> None:
    h = Harness()
    h.add("web", replicas=1)
    h.rsc.on_pod_update(pod, terminating(pod))
    h.rsc.on_pod_delete(pod)
    assert len(h.created) == 1


def test_deleted_replica_set_stops_replacing() -> None:
    h = Harness()
    uid = h.add("web", replicas=2)
    active = h.rsc.delete(uid)
    assert active == sorted(p.uid for p, _ in h.created)
    for pod, _ in list(h.created):
        h.rsc.on_pod_delete(pod)
    assert len(h.created) == 2


def test_each_replica_set_keeps_its_own_count() -> None:
    h = Harness()
    h.add("a", replicas=1)
    h.add("b", replicas=2)
    a_pod = h.created[0][0]
    h.rsc.on_pod_delete(a_pod)
    assert [p.name.split("-")[0] for p, _ in h.created] == ["a", "b", "b", "a"]
