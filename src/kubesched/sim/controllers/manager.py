"""Runs the workload controllers against the simulated cluster (the
kube-controller-manager of the simulation).

Each controller syncs an object *after* every change of the instant is applied
(engine priority ``PRIO_LATE``), as upstream's controllers act on informers that
have seen the API writes: a dump's pods, ReplicaSets and Deployments created at
time 0 are claimed by their owners before any of them creates anything. Later
syncs are triggered as upstream's event handlers trigger them (a pod of the
workload changes, a node comes or goes, an orphan a selector matches appears, a
Job finishes, a CronJob's schedule time comes); ReplicaSets replace their pods
from the watch events directly.

Syncs of one instant run in kind order (Deployments, ReplicaSets,
StatefulSets, DaemonSets, CronJobs, Jobs) until none is left.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final

from kubesched.api.admission import PriorityClasses
from kubesched.api.convert import Workload
from kubesched.api.selectors import label_selector_matches
from kubesched.api.storage import PersistentVolumeClaim
from kubesched.api.types import RUNNING, LabelSelector, Node, OwnerReference, Pod, Time
from kubesched.api.workloads import (
    CronJobDetails,
    DaemonSetDetails,
    DeploymentDetails,
    JobDetails,
    StatefulSetDetails,
)
from kubesched.sim.cluster import Cluster
from kubesched.sim.controllers.base import Env
from kubesched.sim.controllers.cronjob import CronJobController, CronJobObj
from kubesched.sim.controllers.daemonset import DaemonSetController, DaemonSetObj
from kubesched.sim.controllers.deployment import DeploymentController, DeploymentObj
from kubesched.sim.controllers.job import JobController, JobObj
from kubesched.sim.controllers.naming import template_hash
from kubesched.sim.controllers.podutil import ADOPT, OWNED, claim, controller_ref, is_active
from kubesched.sim.controllers.replicaset import ReplicaSetController, ReplicaSetSpec
from kubesched.sim.controllers.statefulset import StatefulSetController, StatefulSetObj
from kubesched.sim.controllers.template import PodTemplate
from kubesched.sim.engine import PRIO_LATE
from kubesched.sim.storage import StorageObject

ORDER: Final = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "CronJob", "Job")
MAX_ROUNDS: Final = 1000


@dataclass(slots=True)
class ControllerManager:
    cluster: Cluster
    classes: PriorityClasses
    seed: int = 0
    epoch: int = 0
    env: Env = field(init=False)
    rs: ReplicaSetController = field(init=False)
    deployments: DeploymentController = field(init=False)
    statefulsets: StatefulSetController = field(init=False)
    daemonsets: DaemonSetController = field(init=False)
    jobs: JobController = field(init=False)
    cronjobs: CronJobController = field(init=False)
    _dirty: dict[str, dict[str, None]] = field(default_factory=lambda: {k: {} for k in ORDER})
    _first_rs_sync: set[str] = field(default_factory=set)
    _scheduled_at: int | None = None

    def __post_init__(self) -> None:
        cluster = self.cluster
        self.env = Env(cluster, self.classes, self.enqueue, self.epoch)
        env = self.env
        self.rs = ReplicaSetController(
            env.create,
            random.Random(f"{self.seed}/replicasets"),
            cluster.controller_event,
            delete_pod=env.delete,
            adopt_pod=env.patch_owners,
            now=lambda: cluster.now,
        )
        self.deployments = DeploymentController(env, self.rs)
        self.rs.related = self.deployments.related_pods
        self.statefulsets = StatefulSetController(env)
        self.daemonsets = DaemonSetController(env, random.Random(f"{self.seed}/daemonsets"))
        self.jobs = JobController(env, random.Random(f"{self.seed}/jobs"))
        self.cronjobs = CronJobController(env, self.jobs)
        self.jobs.on_finished = self.cronjobs.job_finished
        self.jobs.on_deleted = self.cronjobs.job_finished
        cluster.object_watchers.append(self)

    # ------------------------------------------------------------------ queue
    def enqueue(self, kind: str, uid: str) -> None:
        self._dirty[kind][uid] = None
        now = self.cluster.now
        if self._scheduled_at != now:
            self._scheduled_at = now
            self.cluster.engine.at(now, self._run, PRIO_LATE)

    def _run(self) -> None:
        self._scheduled_at = None
        self.env.end_pass()  # a pass reads the pods as they are now
        syncs: dict[str, Callable[[str], None]] = {
            "Deployment": self.deployments.sync,
            "ReplicaSet": self._sync_rs,
            "StatefulSet": self.statefulsets.sync,
            "DaemonSet": self.daemonsets.sync,
            "CronJob": self.cronjobs.sync,
            "Job": self.jobs.sync,
        }
        try:
            for _ in range(MAX_ROUNDS):
                progressed = False
                for kind in ORDER:
                    dirty = self._dirty[kind]
                    while dirty:
                        uid = next(iter(dirty))
                        del dirty[uid]
                        syncs[kind](uid)
                        progressed = True
                if not progressed:
                    break
        finally:
            self.env.end_pass()

    # ------------------------------------------------------------------ objects
    def _rel(self, t: Time | None, default: int) -> int:
        """An absolute time of the input on the run's clock."""
        return default if t is None else t - self.epoch

    def create(self, w: Workload, run_for: int | None) -> None:
        """An input workload object is created now."""
        now = self.cluster.now
        creation = self._rel(w.creation_timestamp, now)
        template = PodTemplate.of(w, run_for)
        owner = next((r for r in w.owner_references if r.controller), None)
        sel = w.selector or LabelSelector()
        if w.kind == "Deployment":
            assert isinstance(w.details, DeploymentDetails)
            d = DeploymentObj(
                w.namespace,
                w.name,
                w.uid,
                w.replicas,
                sel,
                template,
                w.template_key,
                w.details,
                creation,
            )
            self.deployments.add(d)
        elif w.kind == "ReplicaSet":
            self._register_rs(w, template, owner, creation)
        elif w.kind == "StatefulSet":
            assert isinstance(w.details, StatefulSetDetails)
            revision = StatefulSetObj.revision_name(w.name, w.details, w.template_key)
            sts = StatefulSetObj(
                w.namespace, w.name, w.uid, w.replicas, sel, template, w.details, revision
            )
            sts.max_unavailable = w.details.max_unavailable
            self.statefulsets.add(sts)
        elif w.kind == "DaemonSet":
            assert isinstance(w.details, DaemonSetDetails)
            revision = template_hash(w.template_key)
            self.daemonsets.add(
                DaemonSetObj(w.namespace, w.name, w.uid, sel, template, w.details, revision)
            )
        elif w.kind == "Job":
            assert isinstance(w.details, JobDetails)
            job = JobObj(
                w.namespace,
                w.name,
                w.uid,
                sel,
                template,
                w.details,
                labels=dict(w.labels),
                owner=owner,
                creation=creation,
                ttl_seconds_after_finished=w.details.ttl_seconds_after_finished,
            )
            if w.details.start_time is not None:
                job.start = self._rel(w.details.start_time, now)
            self.jobs.add(job)
        elif w.kind == "CronJob":
            assert isinstance(w.details, CronJobDetails)
            cj = CronJobObj(w.namespace, w.name, w.uid, template, w.details, creation)
            if w.details.last_schedule_time is not None:
                cj.last_schedule = self._rel(w.details.last_schedule_time, now)
            cj.active = list(w.details.active)
            self.cronjobs.add(cj)
        self.enqueue(w.kind, w.uid)

    def _register_rs(
        self, w: Workload, template: PodTemplate, owner: OwnerReference | None, creation: int
    ) -> None:
        ref = controller_ref("ReplicaSet", w.name, w.uid)
        classes = self.classes

        def make_pod(name: str) -> Pod:
            return template.pod(name, ref, classes)

        spec = ReplicaSetSpec(
            w.namespace,
            w.name,
            w.uid,
            w.replicas,
            dict(w.labels),
            dict(w.template_annotations),
            w.template_spec,
            make_pod,
            template.run_for,
            selector=w.selector,
            owner=owner,
            creation=creation,
            template_key=w.template_key,
        )
        self.rs.sets[w.uid] = spec
        self.rs.active.setdefault(w.uid, set())
        self._first_rs_sync.add(w.uid)

    def _sync_rs(self, uid: str) -> None:
        rs = self.rs.sets.get(uid)
        if rs is None or rs.deleted:
            return
        claimed = []
        tracked = self.rs.active.get(uid, set())
        for pod in self.env.pods_in(rs.namespace):
            if pod.uid in tracked or not is_active(pod):
                continue
            if claim(pod, uid, rs.namespace, rs.selector) in (OWNED, ADOPT):
                claimed.append(pod)
        if uid in self._first_rs_sync:
            self._first_rs_sync.discard(uid)
            self.rs.add(rs, claimed)
        else:
            self.rs.claim(uid, claimed)

    def delete(self, w: Workload) -> None:
        """An input workload object is deleted; the garbage collector deletes what it
        owns (background propagation), its pods gracefully."""
        pods: list[Pod] = []
        uids: list[str] = []
        if w.kind == "Deployment":
            uids = self.deployments.delete(w.uid)
        elif w.kind == "ReplicaSet":
            uids = self.rs.delete(w.uid)
        elif w.kind == "StatefulSet":
            pods = self.statefulsets.delete(w.uid)
        elif w.kind == "DaemonSet":
            pods = self.daemonsets.delete(w.uid)
        elif w.kind == "Job":
            pods = self.jobs.delete(w.uid)
        elif w.kind == "CronJob":
            pods = self.cronjobs.delete(w.uid)
        if uids:
            wanted = set(uids)
            pods = [p for p in self.cluster.pods.values() if p.uid in wanted]
        for pod in pods:
            self.env.delete(pod)
        if w.kind == "StatefulSet":
            self.cluster.volumes.owner_deleted(w.uid)  # claims under whenDeleted: Delete
        self.env.end_pass()

    def retry_failed_creates(self) -> None:
        """A PriorityClass was created: pod creations it refused may succeed now."""
        self.rs.retry_failed_creates()
        self.statefulsets.retry_failed_creates()
        self.daemonsets.retry_failed_creates()
        self.jobs.retry_failed_creates()

    # ------------------------------------------------------------------ lookups
    def scale_of(self, namespace: str, ref: OwnerReference) -> tuple[str, int] | None:
        """The disruption controller's finders: a ReplicaSet's scale, or its
        Deployment's when a Deployment controls it; a StatefulSet's; nothing else
        has a scale."""
        if ref.kind == "ReplicaSet":
            rs = self.rs.sets.get(ref.uid)
            if rs is None or rs.namespace != namespace:
                return None
            if rs.owner is not None and rs.owner.kind == "Deployment":
                d = self.deployments.deployments.get(rs.owner.uid)
                return None if d is None else (d.uid, d.replicas)
            return rs.uid, rs.replicas
        if ref.kind == "StatefulSet":
            sts = self.statefulsets.sets.get(ref.uid)
            if sts is None or sts.namespace != namespace:
                return None
            return sts.uid, sts.replicas
        return None

    def selector_of(self, namespace: str, ref: OwnerReference) -> LabelSelector | None:
        """The selector of the ReplicaSet or StatefulSet a controller reference names."""
        if ref.kind == "StatefulSet":
            sts = self.statefulsets.sets.get(ref.uid)
            return sts.selector if sts is not None and sts.namespace == namespace else None
        return self.rs.selector_of(namespace, ref)

    # ------------------------------------------------------------------ watch
    def on_node_add(self, node: Node) -> None:
        self._nodes_changed()

    def on_node_update(self, old: Node, new: Node) -> None:
        self._nodes_changed()

    def on_node_delete(self, node: Node) -> None:
        self._nodes_changed()

    def _nodes_changed(self) -> None:
        for uid in self.daemonsets.sets:
            self.enqueue("DaemonSet", uid)

    def on_object_add(self, resource: str, obj: StorageObject) -> None:
        pass

    def on_object_update(self, resource: str, old: StorageObject, new: StorageObject) -> None:
        pass

    def on_object_delete(self, resource: str, obj: StorageObject) -> None:
        """A claim went: the namespace's StatefulSets with claim templates sync (a pod
        held back by that claim may be created now; upstream retries with backoff)."""
        if isinstance(obj, PersistentVolumeClaim):
            self.statefulsets.claim_deleted(obj.namespace)

    def on_pod_add(self, pod: Pod) -> None:
        self.rs.on_pod_add(pod)
        ref = pod.controller_ref()
        if ref is None:
            self._orphan(pod)
        else:
            self._owned(pod, ref, bound_only=False)

    def on_pod_update(self, old: Pod, new: Pod) -> None:
        self.rs.on_pod_update(old, new)
        ref = new.controller_ref()
        if ref is None:
            if old.controller_ref() is not None or old.labels is not new.labels:
                self._orphan(new)
            return
        new_phase = old.phase != new.phase
        new_deletion = old.deletion_timestamp != new.deletion_timestamp
        bound = not old.node_name and bool(new.node_name)
        if not (new_phase or new_deletion or bound):
            return
        bound_only = bound and not new_deletion and new.phase == RUNNING
        self._owned(new, ref, bound_only=bound_only)

    def on_pod_delete(self, pod: Pod) -> None:
        self.rs.on_pod_delete(pod)
        ref = pod.controller_ref()
        if ref is not None:
            self._owned(pod, ref, bound_only=False)

    def _owned(self, pod: Pod, ref: OwnerReference, *, bound_only: bool) -> None:
        if ref.kind == "ReplicaSet":
            rs = self.rs.sets.get(ref.uid)
            d = self.deployments.owner_of(rs) if rs is not None else None
            if d is not None and d.in_progress:
                self.enqueue("Deployment", d.uid)
        elif ref.kind == "StatefulSet":
            if ref.uid in self.statefulsets.sets:
                self.enqueue("StatefulSet", ref.uid)
        elif bound_only:
            return
        elif ref.kind == "DaemonSet":
            if ref.uid in self.daemonsets.sets:
                self.enqueue("DaemonSet", ref.uid)
        elif ref.kind == "Job" and ref.uid in self.jobs.jobs:
            self.enqueue("Job", ref.uid)

    def _orphan(self, pod: Pod) -> None:
        """An orphan pod appeared (or lost its owner, or changed labels): every
        controller of its namespace whose selector matches it syncs (and may adopt it)."""
        if not is_active(pod):
            return
        ns, labels = pod.namespace, pod.labels
        for rs in self.rs.sets.values():
            if rs.namespace == ns and not rs.deleted and _matches(rs.selector, labels):
                self.enqueue("ReplicaSet", rs.uid)
        for sts in self.statefulsets.sets.values():
            if self.statefulsets.matches(sts, pod):
                self.enqueue("StatefulSet", sts.uid)
        for ds in self.daemonsets.sets.values():
            if ds.namespace == ns and _matches(ds.selector, labels):
                self.enqueue("DaemonSet", ds.uid)
        for job in self.jobs.jobs.values():
            if job.namespace == ns and _matches(job.selector, labels):
                self.enqueue("Job", job.uid)


def _matches(selector: LabelSelector | None, labels: Mapping[str, str]) -> bool:
    return selector is not None and label_selector_matches(selector, labels)
