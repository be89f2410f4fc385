"""The Deployment controller (upstream pkg/controller/deployment), through ReplicaSets.

At each sync a Deployment claims its ReplicaSets (``ClaimReplicaSets``, adopting
matching orphans). The *new* one is the oldest whose template equals the
Deployment's ignoring ``pod-template-hash`` (``FindNewReplicaSet``); the others are
*old*. Without one it creates ``<deployment>-<hash>`` (labels and selector gain
``pod-template-hash``; a taken name is retried with the next collision count).

Rollout, as upstream's ``rolloutRolling`` / ``rolloutRecreate``:

- RollingUpdate: the new ReplicaSet scales up to ``replicas + maxSurge`` pods in
  all (``NewRSNewReplicas``), old ones, oldest first, down while ``replicas -
  maxUnavailable`` stay available (``reconcileOldReplicaSets``,
  ``cleanupUnhealthyReplicas``, ``scaleDownOldReplicaSetsForRollingUpdate``); a
  dump's steady state is left as it is.
- Recreate: old ReplicaSets scale to 0; once none of their pods is left
  running or terminating, the new one is created or scaled to ``replicas``.

A pod is available once ready. Not modelled: ``minReadySeconds``, ``paused``,
proportional scaling mid-rollout, ``revisionHistoryLimit`` cleanup and the
``ScalingReplicaSet`` events.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from kubesched.api.selectors import label_selector_matches
from kubesched.api.types import LabelSelector, Pod
from kubesched.api.workloads import POD_TEMPLATE_HASH, RECREATE, DeploymentDetails
from kubesched.sim.controllers.base import Env
from kubesched.sim.controllers.naming import template_hash
from kubesched.sim.controllers.podutil import controller_ref, is_terminal
from kubesched.sim.controllers.replicaset import ReplicaSetController, ReplicaSetSpec
from kubesched.sim.controllers.template import PodTemplate
from kubesched.sim.disruption import scaled_value


@dataclass(slots=True, eq=False)
class DeploymentObj:
    namespace: str
    name: str
    uid: str
    replicas: int
    selector: LabelSelector
    template: PodTemplate
    template_key: str
    details: DeploymentDetails
    creation: int = 0
    deleted: bool = False
    in_progress: bool = True
    """A rollout is under way: pod availability changes re-sync the Deployment."""

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def resolve_fenceposts(d: DeploymentObj) -> tuple[int, int]:
    """(maxSurge, maxUnavailable) as numbers (``ResolveFenceposts``: surge rounded
    up, unavailability down; both 0 makes unavailability 1)."""
    surge = scaled_value(d.details.max_surge, d.replicas, round_up=True)
    unavailable = scaled_value(d.details.max_unavailable, d.replicas, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def max_unavailable(d: DeploymentObj) -> int:
    """``MaxUnavailable``: 0 for Recreate or 0 replicas, at most ``replicas``."""
    if d.details.strategy == RECREATE or d.replicas == 0:
        return 0
    return min(resolve_fenceposts(d)[1], d.replicas)


def new_rs_new_replicas(d: DeploymentObj, all_rs: list[ReplicaSetSpec], new: ReplicaSetSpec) -> int:
    """``NewRSNewReplicas``: how far the new ReplicaSet may scale up now."""
    if d.details.strategy == RECREATE:
        return d.replicas
    surge = scaled_value(d.details.max_surge, d.replicas, round_up=True)
    current = sum(rs.replicas for rs in all_rs)
    max_total = d.replicas + surge
    if current >= max_total:
        return new.replicas
    return new.replicas + min(max_total - current, d.replicas - new.replicas)


@dataclass(slots=True)
class DeploymentController:
    env: Env
    rsc: ReplicaSetController
    deployments: dict[str, DeploymentObj] = field(default_factory=dict)

    def add(self, d: DeploymentObj) -> None:
        self.deployments[d.uid] = d

    def owner_of(self, rs: ReplicaSetSpec) -> DeploymentObj | None:
        if rs.owner is None or rs.owner.kind != "Deployment":
            return None
        d = self.deployments.get(rs.owner.uid)
        return d if d is not None and d.namespace == rs.namespace and not d.deleted else None

    def replica_sets(self, d: DeploymentObj) -> list[ReplicaSetSpec]:
        """The ReplicaSets the Deployment controls, oldest first."""
        out = [
            rs
            for rs in self.rsc.sets.values()
            if rs.namespace == d.namespace
            and not rs.deleted
            and rs.owner is not None
            and rs.owner.uid == d.uid
        ]
        return sorted(out, key=lambda rs: (rs.creation, rs.name))

    def related_pods(self, rs: ReplicaSetSpec) -> list[Pod]:
        """The active pods of every ReplicaSet of ``rs``'s Deployment
        (``getIndirectlyRelatedPods``), or of ``rs`` alone."""
        d = self.owner_of(rs)
        if d is None:
            return self.rsc.pods_of(rs.uid)
        return [p for other in self.replica_sets(d) for p in self.rsc.pods_of(other.uid)]

    def delete(self, uid: str) -> list[str]:
        """The Deployment is deleted: its ReplicaSets go (their active pods' uids
        are returned for the garbage collector to delete)."""
        d = self.deployments.pop(uid, None)
        if d is None:
            return []
        d.deleted = True
        uids: list[str] = []
        for rs in self.replica_sets(d):
            uids.extend(self.rsc.delete(rs.uid))
        return uids

    # ------------------------------------------------------------------ sync
    def sync(self, uid: str) -> None:
        d = self.deployments.get(uid)
        if d is None or d.deleted:
            return
        rses = self._claim(d)
        new = next((rs for rs in rses if rs.template_key == d.template_key), None)
        old = [rs for rs in rses if rs is not new]
        if d.details.strategy == RECREATE:
            new = self._recreate(d, new, old)
        else:
            new = self._rolling(d, new, old)
        d.in_progress = (
            new is None
            or new.replicas != d.replicas
            or any(rs.replicas > 0 for rs in old)
            or (d.details.strategy == RECREATE and self._old_pods_running(d, new, old))
        )

    def _claim(self, d: DeploymentObj) -> list[ReplicaSetSpec]:
        out = []
        for rs in list(self.rsc.sets.values()):
            if rs.namespace != d.namespace or rs.deleted:
                continue
            matches = label_selector_matches(d.selector, rs.labels)
            if rs.owner is not None:
                if rs.owner.uid != d.uid:
                    continue
                if not matches:
                    rs.owner = None  # released
                    continue
                out.append(rs)
            elif matches:
                rs.owner = controller_ref("Deployment", d.name, d.uid)
                out.append(rs)
        return sorted(out, key=lambda rs: (rs.creation, rs.name))

    def _rs_name(self, d: DeploymentObj) -> str:
        taken = {rs.name for rs in self.rsc.sets.values() if rs.namespace == d.namespace}
        collisions = 0
        while True:
            key = d.key if collisions == 0 else f"{d.key}/{collisions}"
            name = f"{d.name}-{template_hash(key)}"
            if name not in taken:
                return name
            collisions += 1

    def _create_new(self, d: DeploymentObj, old: list[ReplicaSetSpec]) -> ReplicaSetSpec:
        name = self._rs_name(d)
        pth = name.rsplit("-", 1)[-1]
        labels = {**d.template.labels, POD_TEMPLATE_HASH: pth}
        selector = LabelSelector(
            {**d.selector.match_labels, POD_TEMPLATE_HASH: pth}, d.selector.match_expressions
        )
        template = replace(d.template, labels=labels)
        uid = f"replicaset/{d.namespace}/{name}"
        ref = controller_ref("ReplicaSet", name, uid)
        env = self.env

        def make_pod(pod_name: str) -> Pod:
            return template.pod(pod_name, ref, env.classes)

        rs = ReplicaSetSpec(
            d.namespace,
            name,
            uid,
            0,
            labels,
            dict(d.template.annotations),
            d.template.spec,
            make_pod,
            d.template.run_for,
            selector=selector,
            owner=controller_ref("Deployment", d.name, d.uid),
            creation=env.now,
            template_key=d.template_key,
        )
        rs.replicas = new_rs_new_replicas(d, [*old, rs], rs)
        self.rsc.add(rs)
        return rs

    def _rolling(
        self, d: DeploymentObj, new: ReplicaSetSpec | None, old: list[ReplicaSetSpec]
    ) -> ReplicaSetSpec:
        if new is None:
            new = self._create_new(d, old)
        all_rs = [*old, new]
        if self._reconcile_new(d, all_rs, new):
            return new
        self._reconcile_old(d, all_rs, [rs for rs in old if rs.replicas > 0], new)
        return new

    def _reconcile_new(
        self, d: DeploymentObj, all_rs: list[ReplicaSetSpec], new: ReplicaSetSpec
    ) -> bool:
        if new.replicas == d.replicas:
            return False
        if new.replicas > d.replicas:
            self.rsc.scale(new.uid, d.replicas)
            return True
        count = new_rs_new_replicas(d, all_rs, new)
        if count == new.replicas:
            return False
        self.rsc.scale(new.uid, count)
        return True

    def _reconcile_old(
        self,
        d: DeploymentObj,
        all_rs: list[ReplicaSetSpec],
        old: list[ReplicaSetSpec],
        new: ReplicaSetSpec,
    ) -> bool:
        if sum(rs.replicas for rs in old) == 0:
            return False
        all_pods = sum(rs.replicas for rs in all_rs)
        min_available = d.replicas - max_unavailable(d)
        new_unavailable = new.replicas - self.rsc.available(new.uid)
        max_scaled_down = all_pods - min_available - new_unavailable
        if max_scaled_down <= 0:
            return False
        cleaned = self._cleanup_unhealthy(old, max_scaled_down)
        scaled = self._scale_down_old(d, [*old, new], old)
        return cleaned + scaled > 0

    def _cleanup_unhealthy(self, old: list[ReplicaSetSpec], max_cleanup: int) -> int:
        total = 0
        for rs in sorted(old, key=lambda r: (r.creation, r.name)):
            if total >= max_cleanup:
                break
            available = self.rsc.available(rs.uid)
            if rs.replicas in (0, available):
                continue
            down = min(max_cleanup - total, rs.replicas - available)
            self.rsc.scale(rs.uid, rs.replicas - down)
            total += down
        return total

    def _scale_down_old(
        self, d: DeploymentObj, all_rs: list[ReplicaSetSpec], old: list[ReplicaSetSpec]
    ) -> int:
        min_available = d.replicas - max_unavailable(d)
        available = sum(self.rsc.available(rs.uid) for rs in all_rs)
        if available <= min_available:
            return 0
        total = 0
        target = available - min_available
        for rs in sorted(old, key=lambda r: (r.creation, r.name)):
            if total >= target:
                break
            if rs.replicas == 0:
                continue
            down = min(rs.replicas, target - total)
            self.rsc.scale(rs.uid, rs.replicas - down)
            total += down
        return total

    def _recreate(
        self, d: DeploymentObj, new: ReplicaSetSpec | None, old: list[ReplicaSetSpec]
    ) -> ReplicaSetSpec | None:
        scaled = False
        for rs in old:
            if rs.replicas > 0:
                self.rsc.scale(rs.uid, 0)
                scaled = True
        if scaled or self._old_pods_running(d, new, old):
            return new
        if new is None:
            return self._create_new(d, old)
        self.rsc.scale(new.uid, d.replicas)
        return new

    def _old_pods_running(
        self, d: DeploymentObj, new: ReplicaSetSpec | None, old: list[ReplicaSetSpec]
    ) -> bool:
        """``oldPodsRunning``: an old ReplicaSet still has a pod that is not terminal
        (terminating ones included)."""
        for rs in old:
            if rs is new:
                continue
            if any(not is_terminal(p) for p in self.env.owned_pods(d.namespace, rs.uid)):
                return True
        return False
