"""The DaemonSet controller (upstream pkg/controller/daemon, daemon_controller.go
``manage`` / ``podsShouldBeOnNode`` / ``NodeShouldRunDaemonPod`` and
util/daemonset_util.go).

A node *should run* the daemon pod when the template's pod, with the tolerations
the controller adds (``AddOrUpdateDaemonPodTolerations``), matches its
``nodeName``, required node affinity and node selector and tolerates every
NoSchedule/NoExecute taint; a pod there *should continue running* while its
NoExecute taints are tolerated.

Each sync, per node in cluster order: a node that should run one and has none gets
``<ds>-<5 random characters>`` with the required node affinity replaced by
``matchFields metadata.name In [node]`` (``ReplaceDaemonSetPodNodeNameNodeAffinity``);
failed or succeeded pods are deleted (``FailedDaemonPod`` / ``SucceededDaemonPod``)
and of several running ones all but the oldest; a node that should not run it
loses them. A terminating pod holds its node's place; an unscheduled pod whose node
is gone is deleted. Pods carry ``controller-revision-hash`` (and
``pod-template-generation`` with the deprecated generation annotation).

Not modelled: rolling updates (a dump's pods of other revisions are kept),
``maxSurge``, ``minReadySeconds``, the backoff on deleting failed pods.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from typing import Final

from kubesched.api.errors import InputError
from kubesched.api.selectors import match_node_selector_map, node_selector_matches
from kubesched.api.taints import find_matching_untolerated_taint
from kubesched.api.types import (
    FAILED,
    NO_EXECUTE,
    NO_SCHEDULE,
    SUCCEEDED,
    Affinity,
    LabelSelector,
    Node,
    NodeAffinity,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
    Pod,
    PodSpec,
    Taint,
    Toleration,
)
from kubesched.api.workloads import DaemonSetDetails
from kubesched.sim.controllers.base import Env
from kubesched.sim.controllers.naming import random_suffix
from kubesched.sim.controllers.podutil import (
    controller_ref,
    is_terminal,
)
from kubesched.sim.controllers.template import PodTemplate

REVISION_LABEL: Final = "controller-revision-hash"
GENERATION_LABEL: Final = "pod-template-generation"

_EXISTS: Final = "Exists"


def _default_tolerations(host_network: bool) -> tuple[Toleration, ...]:
    out = [
        Toleration("node.kubernetes.io/not-ready", _EXISTS, "", NO_EXECUTE),
        Toleration("node.kubernetes.io/unreachable", _EXISTS, "", NO_EXECUTE),
        Toleration("node.kubernetes.io/disk-pressure", _EXISTS, "", NO_SCHEDULE),
        Toleration("node.kubernetes.io/memory-pressure", _EXISTS, "", NO_SCHEDULE),
        Toleration("node.kubernetes.io/pid-pressure", _EXISTS, "", NO_SCHEDULE),
        Toleration("node.kubernetes.io/unschedulable", _EXISTS, "", NO_SCHEDULE),
    ]
    if host_network:
        out.append(Toleration("node.kubernetes.io/network-unavailable", _EXISTS, "", NO_SCHEDULE))
    return tuple(out)


def _same_toleration(a: Toleration, b: Toleration) -> bool:
    """Toleration.MatchToleration: key, operator, value and effect equal."""
    return (a.key, a.operator, a.value, a.effect) == (b.key, b.operator, b.value, b.effect)


def add_or_update_tolerations(
    tolerations: tuple[Toleration, ...], added: tuple[Toleration, ...]
) -> tuple[Toleration, ...]:
    """``AddOrUpdateTolerationInPodSpec`` for each of ``added``: one matching an
    existing toleration replaces it in place, any other is appended."""
    out = list(tolerations)
    for t in added:
        for i, cur in enumerate(out):
            if _same_toleration(cur, t):
                out[i] = t
                break
        else:
            out.append(t)
    return tuple(out)


def daemon_spec(spec: PodSpec) -> PodSpec:
    """The template's spec with the daemon tolerations (``CreatePodTemplate``)."""
    return replace(
        spec,
        tolerations=add_or_update_tolerations(
            spec.tolerations, _default_tolerations(spec.host_network)
        ),
    )


def with_node_affinity(spec: PodSpec, node_name: str) -> PodSpec:
    """``ReplaceDaemonSetPodNodeNameNodeAffinity``: the required node affinity becomes
    the single term ``matchFields metadata.name In [node]``; preferred terms stay."""
    term = NodeSelectorTerm(
        match_fields=(NodeSelectorRequirement("metadata.name", "In", (node_name,)),)
    )
    aff = spec.affinity or Affinity()
    na = aff.node_affinity or NodeAffinity()
    new_na = NodeAffinity(required=NodeSelector((term,)), preferred=na.preferred)
    return replace(spec, affinity=replace(aff, node_affinity=new_na))


def _no_schedule_or_execute(t: Taint) -> bool:
    return t.effect in (NO_SCHEDULE, NO_EXECUTE)


def _no_execute(t: Taint) -> bool:
    return t.effect == NO_EXECUTE


def node_should_run(node: Node, template: PodTemplate, spec: PodSpec) -> tuple[bool, bool]:
    """``NodeShouldRunDaemonPod``: (should run, should continue running); ``spec``
    is the template's spec with the daemon tolerations."""
    if template.node_name and template.node_name != node.name:
        return False, False
    fits_affinity = match_node_selector_map(spec.node_selector, node.labels)
    aff = spec.affinity.node_affinity if spec.affinity is not None else None
    if fits_affinity and aff is not None and aff.required is not None:
        fits_affinity = node_selector_matches(aff.required, node.name, node.labels)
    if not fits_affinity:
        return False, False
    if find_matching_untolerated_taint(node.taints, spec.tolerations, _no_schedule_or_execute):
        untolerated = find_matching_untolerated_taint(node.taints, spec.tolerations, _no_execute)
        return False, untolerated is None
    return True, True


def target_node(pod: Pod) -> str | None:
    """``GetTargetNodeName``: the node a daemon pod is for."""
    if pod.node_name:
        return pod.node_name
    aff = pod.spec.affinity
    if aff is None or aff.node_affinity is None or aff.node_affinity.required is None:
        return None
    for term in aff.node_affinity.required.terms:
        for req in term.match_fields:
            if req.key == "metadata.name" and req.operator == "In":
                return req.values[0] if len(req.values) == 1 else None
    return None


def _by_creation_and_phase(pod: Pod) -> tuple[int, int, str]:
    """``podByCreationTimestampAndPhase``: scheduled first, then oldest, then name."""
    return (0 if pod.node_name else 1, pod.creation_timestamp, pod.name)


@dataclass(slots=True, eq=False)
class DaemonSetObj:
    namespace: str
    name: str
    uid: str
    selector: LabelSelector
    template: PodTemplate
    details: DaemonSetDetails
    revision: str
    """``controller-revision-hash`` of the pods it creates."""
    spec: PodSpec = field(init=False)
    node_specs: dict[str, PodSpec] = field(default_factory=dict)
    deleted: bool = False
    create_failed: bool = False

    def __post_init__(self) -> None:
        self.spec = daemon_spec(self.template.spec)

    def spec_for(self, node_name: str) -> PodSpec:
        """The spec of this DaemonSet's pods for one node (shared by them)."""
        spec = self.node_specs.get(node_name)
        if spec is None:
            spec = with_node_affinity(self.spec, node_name)
            self.node_specs[node_name] = spec
        return spec


@dataclass(slots=True)
class DaemonSetController:
    env: Env
    rng: random.Random
    sets: dict[str, DaemonSetObj] = field(default_factory=dict)

    def add(self, ds: DaemonSetObj) -> None:
        self.sets[ds.uid] = ds

    def delete(self, uid: str) -> list[Pod]:
        ds = self.sets.pop(uid, None)
        if ds is None:
            return []
        ds.deleted = True
        return self.env.owned_pods(ds.namespace, uid)

    def _pods(self, ds: DaemonSetObj) -> list[Pod]:
        ref = controller_ref("DaemonSet", ds.name, ds.uid)
        return self.env.claim_pods(ref, ds.namespace, ds.selector)

    def sync(self, uid: str) -> None:
        ds = self.sets.get(uid)
        if ds is None or ds.deleted:
            return
        by_node: dict[str, list[Pod]] = {}
        for pod in self._pods(ds):
            if is_terminal(pod) and pod.deletion_timestamp is not None:
                continue
            target = target_node(pod)
            if target is not None:
                by_node.setdefault(target, []).append(pod)
        nodes = self.env.cluster.nodes
        to_create: list[str] = []
        to_delete: list[Pod] = []
        for node in nodes.values():
            self._node(ds, node, by_node.get(node.name, []), to_create, to_delete)
        for name, pods in by_node.items():
            if name not in nodes:
                to_delete.extend(p for p in pods if not p.node_name)
        for pod in to_delete:
            self.env.delete(pod)
        ds.create_failed = False
        for node_name in to_create:
            if not self._create(ds, node_name):
                break

    def _node(
        self,
        ds: DaemonSetObj,
        node: Node,
        pods: list[Pod],
        to_create: list[str],
        to_delete: list[Pod],
    ) -> None:
        should_run, should_continue = node_should_run(node, ds.template, ds.spec)
        if should_run and not pods:
            to_create.append(node.name)
        elif should_continue:
            running = []
            for pod in pods:
                if pod.deletion_timestamp is not None:
                    continue
                if pod.phase == FAILED:
                    self._pod_event(
                        ds,
                        "Warning",
                        "FailedDaemonPod",
                        f"Found failed daemon pod {pod.namespace}/{pod.name} on node "
                        f"{node.name}, will try to kill it",
                    )
                    to_delete.append(pod)
                elif pod.phase == SUCCEEDED:
                    self._pod_event(
                        ds,
                        "Normal",
                        "SucceededDaemonPod",
                        f"Found succeeded daemon pod {pod.namespace}/{pod.name} on node "
                        f"{node.name}, will try to delete it",
                    )
                    to_delete.append(pod)
                else:
                    running.append(pod)
            if len(running) > 1:
                running.sort(key=_by_creation_and_phase)
                to_delete.extend(running[1:])
        elif pods:
            to_delete.extend(p for p in pods if p.deletion_timestamp is None)

    def _pod_event(self, ds: DaemonSetObj, type_: str, reason: str, msg: str) -> None:
        self.env.event("DaemonSet", ds.namespace, ds.name, type_, reason, msg)

    def _create(self, ds: DaemonSetObj, node_name: str) -> bool:
        labels = {**ds.template.labels, REVISION_LABEL: ds.revision}
        if ds.details.template_generation is not None:
            labels[GENERATION_LABEL] = ds.details.template_generation
        name = f"{ds.name}-{random_suffix(self.rng)}"
        try:
            pod = ds.template.pod(
                name,
                controller_ref("DaemonSet", ds.name, ds.uid),
                self.env.classes,
                labels=labels,
                spec=ds.spec_for(node_name),
            )
        except InputError as err:
            ds.create_failed = True
            self._pod_event(
                ds,
                "Warning",
                "FailedCreate",
                f'Error creating: pods "{ds.name}-" is forbidden: {err.message}',
            )
            return False
        self.env.create(pod, ds.template.run_for)
        return True

    def retry_failed_creates(self) -> None:
        for ds in self.sets.values():
            if ds.create_failed:
                self.env.enqueue("DaemonSet", ds.uid)
