"""What every workload controller is given: the cluster, the PriorityClasses that
exist, the run's epoch, and the manager's work queue.

Controllers are the API server's clients: they read current objects (no informer
lag), create pods (admitted against the PriorityClasses of that moment), delete
them gracefully, patch owner references and record events on their objects.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from kubesched.api.admission import PriorityClasses
from kubesched.api.types import LabelSelector, OwnerReference, Pod
from kubesched.sim.cluster import REASON_DELETED, Cluster
from kubesched.sim.controllers.podutil import ADOPT, OWNED, RELEASE, claim, without_controller


@dataclass(slots=True)
class Env:
    cluster: Cluster
    classes: PriorityClasses
    enqueue: Callable[[str, str], None]
    """(kind, uid): sync this controller object later in the current instant."""
    epoch: int = 0
    """Unix time (ns) of the run's time 0 (CronJob schedules are wall-clock times)."""
    _by_namespace: dict[str, list[Pod]] | None = field(default=None, repr=False)

    @property
    def now(self) -> int:
        return self.cluster.now

    def event(
        self, kind: str, namespace: str, name: str, type_: str, reason: str, msg: str
    ) -> None:
        self.cluster.controller_event(kind, namespace, name, type_, reason, msg)

    def create(self, pod: Pod, run_for: int | None) -> None:
        self.cluster.create_pod(pod, run_for)
        if self._by_namespace is not None:
            self._by_namespace.setdefault(pod.namespace, []).append(pod)

    def delete(self, pod: Pod) -> None:
        """DELETE with the pod's grace period (a controller's or the garbage collector's)."""
        self.cluster.delete_gracefully(pod, REASON_DELETED)

    def patch_owners(self, pod: Pod, refs: tuple[OwnerReference, ...]) -> Pod | None:
        return self.cluster.patch_owner_references(pod, refs)

    def get(self, namespace: str, name: str) -> Pod | None:
        return self.cluster.pods.get(f"{namespace}/{name}")

    def pods_in(self, namespace: str) -> list[Pod]:
        """The pods of a namespace as the API server has them now, in creation order
        (an index built once per sync pass; pods that changed since are re-read)."""
        if self._by_namespace is None:
            index: dict[str, list[Pod]] = {}
            for p in self.cluster.pods.values():
                index.setdefault(p.namespace, []).append(p)
            self._by_namespace = index
        out = []
        for p in self._by_namespace.get(namespace, ()):
            cur = self.cluster.pods.get(p.key)
            if cur is not None and cur.uid == p.uid:
                out.append(cur)
        return out

    def end_pass(self) -> None:
        self._by_namespace = None

    def owned_pods(self, namespace: str, uid: str) -> list[Pod]:
        """Pods of the namespace whose controller is ``uid``, in creation order."""
        out = []
        for p in self.pods_in(namespace):
            ref = p.controller_ref()
            if ref is not None and ref.uid == uid:
                out.append(p)
        return out

    def claim_pods(
        self,
        owner: OwnerReference,
        namespace: str,
        selector: LabelSelector | None,
        pods: Iterable[Pod] | None = None,
    ) -> list[Pod]:
        """``PodControllerRefManager.ClaimPods`` for a live controller ``owner``: the
        pods it owns, adopting matching orphans and releasing its non-matching pods
        (``claim`` per pod; a pod whose patch fails is left out). ``pods`` defaults to
        the namespace's."""
        out = []
        for pod in self.pods_in(namespace) if pods is None else pods:
            outcome = claim(pod, owner.uid, namespace, selector)
            if outcome == OWNED:
                out.append(pod)
            elif outcome == ADOPT:
                adopted = self.patch_owners(pod, (*pod.owner_references, owner))
                if adopted is not None:
                    out.append(adopted)
            elif outcome == RELEASE:
                self.patch_owners(pod, without_controller(pod.owner_references, owner.uid))
        return out
