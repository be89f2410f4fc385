"""The StatefulSet controller (upstream pkg/controller/statefulset,
stateful_set_control.go ``updateStatefulSet``).

Pods are ``<sts>-<ordinal>`` for the ordinals ``[start, start + replicas)``
(``spec.ordinals.start``, default 0): those it controls, and orphans its selector
matches named after one of its ordinals, which it adopts. Each sync:

- a Failed or Succeeded replica is deleted and created again once gone (so a
  preempted pod comes back Pending, same name, when its grace period ends);
- a missing replica is created, with the labels upstream adds:
  ``statefulset.kubernetes.io/pod-name``, ``apps.kubernetes.io/pod-index`` and
  ``controller-revision-hash`` (the update revision: ``status.updateRevision``
  of a dump, else ``<sts>-<hash of the template>``);
- ``OrderedReady`` (monotonic): one step at a time, in ordinal order: after
  creating a pod, or while a replica is terminating or not Running and Ready,
  nothing further is done; pods beyond the range are deleted from the highest
  ordinal down, one at a time, once every replica is healthy;
  ``Parallel``: every replica is created and every extra pod deleted at once;
- RollingUpdate (MaxUnavailableStatefulSet on, as in v1.35+), for a dump whose
  ``status.updateRevision`` is given: pods from ``partition`` up whose
  ``controller-revision-hash`` differs from it are deleted from the highest
  ordinal down while fewer than ``maxUnavailable`` (default 1) replicas are
  unavailable, and come back at the update revision; OnDelete leaves them.

Claims (``stateful_claims``) are created before a pod (and for a Pending replica),
kept when pods go, and their owner references follow the retention policy for
replicas and for condemned pods before they are deleted.

Not modelled: ``minReadySeconds``, the pod's hostname/subdomain, revision
history, and ``UpdateStatefulPod`` for an input pod whose identity labels or
volumes do not match the set (upstream's API server refuses that update anyway).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kubesched.api.errors import InputError
from kubesched.api.goformat import go_aggregate
from kubesched.api.selectors import label_selector_matches
from kubesched.api.types import FAILED, PENDING, SUCCEEDED, IntOrString, LabelSelector, Pod
from kubesched.api.workloads import ON_DELETE, PARALLEL, StatefulSetDetails
from kubesched.sim.controllers.base import Env
from kubesched.sim.controllers.naming import template_hash
from kubesched.sim.controllers.podutil import (
    controller_ref,
    is_ready,
)
from kubesched.sim.controllers.stateful_claims import StatefulClaims
from kubesched.sim.controllers.template import PodTemplate
from kubesched.sim.disruption import scaled_value

POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
REVISION_LABEL = "controller-revision-hash"


@dataclass(slots=True, eq=False)
class StatefulSetObj:
    namespace: str
    name: str
    uid: str
    replicas: int
    selector: LabelSelector
    template: PodTemplate
    details: StatefulSetDetails
    revision: str
    """The update revision's name (``controller-revision-hash`` of new pods)."""
    max_unavailable: IntOrString = 1
    deleted: bool = False
    failed_creates: set[str] = field(default_factory=set)
    """Pod names whose creation was refused (one FailedCreate event each)."""

    @staticmethod
    def revision_name(name: str, details: StatefulSetDetails, template_key: str) -> str:
        return details.update_revision or f"{name}-{template_hash(template_key)}"


def parse_ordinal(sts_name: str, pod_name: str) -> int:
    """``getParentNameAndOrdinal``: the ordinal of ``<sts>-<n>``, or -1."""
    prefix = sts_name + "-"
    if not pod_name.startswith(prefix):
        return -1
    rest = pod_name[len(prefix) :]
    if not rest.isascii() or not rest.isdigit() or (len(rest) > 1 and rest[0] == "0"):
        return -1
    return int(rest)


def _unavailable(pod: Pod | None) -> bool:
    return pod is None or pod.deletion_timestamp is not None or not is_ready(pod)


@dataclass(slots=True)
class StatefulSetController:
    env: Env
    sets: dict[str, StatefulSetObj] = field(default_factory=dict)
    claims: StatefulClaims = field(init=False)

    def __post_init__(self) -> None:
        self.claims = StatefulClaims(self.env)

    def add(self, sts: StatefulSetObj) -> None:
        self.sets[sts.uid] = sts

    def delete(self, uid: str) -> list[Pod]:
        """The StatefulSet is deleted: its pods, for the garbage collector."""
        sts = self.sets.pop(uid, None)
        if sts is None:
            return []
        sts.deleted = True
        return self.env.owned_pods(sts.namespace, uid)

    def matches(self, sts: StatefulSetObj, pod: Pod) -> bool:
        """An orphan this StatefulSet would adopt (``isMemberOf`` and its selector)."""
        return (
            pod.namespace == sts.namespace
            and parse_ordinal(sts.name, pod.name) >= 0
            and label_selector_matches(sts.selector, pod.labels)
        )

    # ------------------------------------------------------------------ sync
    def _pods(self, sts: StatefulSetObj) -> list[Pod]:
        """``getPodsForStatefulSet``: claim the namespace's pods (members only)."""
        members = [
            p for p in self.env.pods_in(sts.namespace) if parse_ordinal(sts.name, p.name) >= 0
        ]
        ref = controller_ref("StatefulSet", sts.name, sts.uid)
        return self.env.claim_pods(ref, sts.namespace, sts.selector, members)

    def sync(self, uid: str) -> None:
        sts = self.sets.get(uid)
        if sts is None or sts.deleted:
            return
        start = sts.details.start_ordinal
        replicas: list[Pod | None] = [None] * sts.replicas
        condemned: list[Pod] = []
        for pod in self._pods(sts):
            ordinal = parse_ordinal(sts.name, pod.name)
            if start <= ordinal < start + sts.replicas:
                replicas[ordinal - start] = pod
            else:
                condemned.append(pod)
        condemned.sort(key=lambda p: parse_ordinal(sts.name, p.name), reverse=True)
        first_unhealthy: Pod | None = None
        for candidate in [*replicas, *reversed(condemned)]:
            if candidate is not None and _unavailable(candidate):
                first_unhealthy = candidate
                break
        monotonic = sts.details.pod_management_policy != PARALLEL
        for i in range(len(replicas)):
            if self._process_replica(sts, replicas, i, start + i, monotonic) and monotonic:
                return
        if sts.details.volume_claim_templates:
            # fixPodClaim: a condemned pod's claims get the owner the policy wants
            # (the pod itself under whenScaled: Delete) before the pod is deleted.
            for pod in condemned:
                if not self.claims.matches_retention(sts, pod.name, pod.uid):
                    self.claims.update_for_retention(sts, pod.name, pod.uid)
        for pod in condemned:
            if self._process_condemned(sts, pod, first_unhealthy, monotonic) and monotonic:
                return
        if sts.details.update_strategy != ON_DELETE and sts.details.update_revision:
            # Only a dump tells which revision its pods are at: the simulation never
            # changes a template, so without status.updateRevision there is none older.
            self._rolling_update(sts, replicas)

    def _process_replica(
        self, sts: StatefulSetObj, replicas: list[Pod | None], i: int, ordinal: int, monotonic: bool
    ) -> bool:
        """``processReplica``; True when a monotonic set must stop here."""
        pod = replicas[i]
        if pod is not None and pod.phase in (FAILED, SUCCEEDED):
            if pod.deletion_timestamp is None:
                self.env.delete(pod)
            return True
        just_created = False
        if pod is None:
            if self.claims.is_stale(sts, f"{sts.name}-{ordinal}", ordinal):
                return True  # an earlier pod's claim awaits the garbage collector
            created = self._create(sts, ordinal)
            replicas[i] = created
            if created is None or monotonic:
                return True
            pod, just_created = created, True
        has_claims = bool(sts.details.volume_claim_templates)
        if has_claims and pod.phase == PENDING and not just_created:
            # createMissingPersistentVolumeClaims: a Pending pod's claims come back.
            if self.claims.create_claims(sts, pod.name, ordinal):
                return True
            self.claims.update_for_retention(sts, pod.name, pod.uid)
        if pod.deletion_timestamp is not None and monotonic:
            return True
        if not is_ready(pod) and monotonic:
            return True
        if has_claims and not self.claims.matches_retention(sts, pod.name, pod.uid):
            self.claims.update_for_retention(sts, pod.name, pod.uid)  # UpdateStatefulPod
        return False

    def _process_condemned(
        self, sts: StatefulSetObj, pod: Pod, first_unhealthy: Pod | None, monotonic: bool
    ) -> bool:
        if pod.deletion_timestamp is not None:
            return monotonic
        if not is_ready(pod) and monotonic and pod is not first_unhealthy:
            return True
        self.env.delete(pod)
        return True

    def _rolling_update(self, sts: StatefulSetObj, replicas: Sequence[Pod | None]) -> None:
        """``updateStatefulSetAfterInvariantEstablished``."""
        count = len(replicas)
        max_unavailable = max(scaled_value(sts.max_unavailable, count, round_up=False), 1)
        unavailable = sum(1 for p in replicas if _unavailable(p))
        if unavailable > max_unavailable:
            return
        budget = max_unavailable - unavailable
        for target in range(count - 1, sts.details.partition - 1, -1):
            if budget <= 0:
                return
            pod = replicas[target]
            if pod is None or pod.deletion_timestamp is not None:
                continue
            if pod.labels.get(REVISION_LABEL, "") != sts.revision:
                self.env.delete(pod)
                budget -= 1

    def _create(self, sts: StatefulSetObj, ordinal: int) -> Pod | None:
        name = f"{sts.name}-{ordinal}"
        labels = {
            **sts.template.labels,
            POD_NAME_LABEL: name,
            POD_INDEX_LABEL: str(ordinal),
            REVISION_LABEL: sts.revision,
        }
        # CreateStatefulPod: the pod's claims first, then the pod.
        errors = self.claims.create_claims(sts, name, ordinal)
        if errors:
            self._failed(sts, name, go_aggregate(errors))
            return None
        if self.env.get(sts.namespace, name) is not None:
            self._failed(sts, name, f'pods "{name}" already exists')
            return None
        try:
            spec = self.claims.pod_spec(sts, ordinal)
        except InputError as err:
            self._failed(sts, name, f'Pod "{name}" is invalid: {err}')
            return None
        try:
            pod = sts.template.pod(
                name,
                controller_ref("StatefulSet", sts.name, sts.uid),
                self.env.classes,
                labels=labels,
                spec=spec,
            )
        except InputError as err:
            self._failed(sts, name, f'pods "{name}" is forbidden: {err.message}')
            return None
        sts.failed_creates.discard(name)
        self.env.create(pod, sts.template.run_for)
        if sts.details.volume_claim_templates:
            self.claims.update_for_retention(sts, pod.name, pod.uid)
        return pod

    def _failed(self, sts: StatefulSetObj, name: str, err: str) -> None:
        """``recordPodEvent``'s FailedCreate (once per pod name until it succeeds)."""
        if name in sts.failed_creates:
            return
        sts.failed_creates.add(name)
        self.env.event(
            "StatefulSet",
            sts.namespace,
            sts.name,
            "Warning",
            "FailedCreate",
            f"create Pod {name} in StatefulSet {sts.name} failed error: {err}",
        )

    def claim_deleted(self, namespace: str) -> None:
        """A claim of ``namespace`` is gone: its sets with claim templates sync again."""
        for sts in self.sets.values():
            if sts.namespace == namespace and sts.details.volume_claim_templates:
                sts.failed_creates.clear()
                self.env.enqueue("StatefulSet", sts.uid)

    def retry_failed_creates(self) -> None:
        for sts in self.sets.values():
            if sts.failed_creates:
                sts.failed_creates.clear()
                self.env.enqueue("StatefulSet", sts.uid)
