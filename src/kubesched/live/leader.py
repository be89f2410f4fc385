"""Leader election on a coordination.k8s.io/v1 Lease, with client-go's rules
(k8s.io/client-go/tools/leaderelection), so that of several kubesched instances
exactly one schedules.

``try_acquire_or_renew`` is one attempt, as client-go's:

1. GET the lease; if there is none, CREATE it with this candidate as holder
   (``acquireTime`` = ``renewTime`` = now, ``leaseTransitions`` 0).
2. When the lease's record differs from the one last seen, remember it and the
   local time it was seen (``observed_at``): expiry is judged on the local clock
   from when the record last changed, never from the server's timestamps
   (clocks of candidates may disagree).
3. Held by another candidate, not empty, and seen changing less than
   ``leaseDurationSeconds`` ago: fail.
4. Otherwise PUT the lease (optimistic concurrency: the resourceVersion read)
   with this holder, ``renewTime`` now, ``acquireTime`` now and
   ``leaseTransitions`` + 1 unless it was already the holder. A 409 Conflict
   (someone wrote in between) fails the attempt.

``run`` acquires (an attempt every ``retry_period``, jittered by up to 1.2x as
client-go's ``JitterUntil``), calls ``on_started_leading``, then renews every
``retry_period``; when no renewal has succeeded for ``renew_deadline`` it calls
``on_stopped_leading`` at once and returns (the caller then stops scheduling).
On ``stop()`` a leader releases the lease (holder emptied, lease duration 1 s,
``ReleaseOnCancel``) so another instance takes over without waiting for expiry.

Times: ``clock`` (seconds, monotonic) for expiry and deadlines, ``wall`` (ns
since the Unix epoch) for the MicroTime stamps; ``sleep`` waits (and returns
early on ``stop``). All three are injected.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kubesched.api.types import Time
from kubesched.live.client import ClusterError, KubeClient, Raw
from kubesched.live.writer import micro_time

log = logging.getLogger(__name__)

JITTER = 1.2
"""client-go's JitterFactor for the acquire and renew loops."""


@dataclass(frozen=True, slots=True)
class LeaseConfig:
    """KubeSchedulerConfiguration's ``leaderElection`` (durations in seconds)."""

    namespace: str = "kube-system"
    name: str = "kubesched"
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0


def _record(lease: Raw) -> tuple[Any, ...]:
    spec = lease.get("spec") or {}
    return (
        spec.get("holderIdentity") or "",
        spec.get("leaseDurationSeconds"),
        spec.get("acquireTime"),
        spec.get("renewTime"),
        spec.get("leaseTransitions") or 0,
    )


@dataclass
class LeaderElector:
    """One candidate (see the module docstring)."""

    client: KubeClient
    identity: str
    config: LeaseConfig = field(default_factory=LeaseConfig)
    clock: Callable[[], float] = time.monotonic
    wall: Callable[[], Time] = time.time_ns
    rng: random.Random = field(default_factory=random.Random)
    observed: tuple[Any, ...] | None = None
    observed_at: float = 0.0
    leading: bool = False
    _stopped: threading.Event = field(default_factory=threading.Event)

    @property
    def _path(self) -> str:
        c = self.config
        return f"/apis/coordination.k8s.io/v1/namespaces/{c.namespace}/leases/{c.name}"

    def try_acquire_or_renew(self) -> bool:
        """One attempt (see the module docstring); True when this candidate holds
        the lease afterwards."""
        c = self.config
        now = self.wall()
        try:
            lease = self.client.request("GET", self._path, what="get lease")
        except ClusterError as err:
            if err.status != 404:
                log.warning("leader election: %s", err)
                return False
            return self._create(now)
        record = _record(lease)
        if record != self.observed:
            self.observed, self.observed_at = record, self.clock()
        holder = record[0]
        if (
            holder
            and holder != self.identity
            and self.observed_at + float(record[1] or c.lease_duration) > self.clock()
        ):
            return False
        spec = dict(lease.get("spec") or {})
        mine = holder == self.identity
        spec.update(
            holderIdentity=self.identity,
            leaseDurationSeconds=int(c.lease_duration),
            renewTime=micro_time(now),
        )
        if not mine:
            spec["acquireTime"] = micro_time(now)
            spec["leaseTransitions"] = int(spec.get("leaseTransitions") or 0) + 1
        try:
            updated = self.client.request(
                "PUT", self._path, body={**lease, "spec": spec}, what="update lease"
            )
        except ClusterError as err:
            if err.status != 409:
                log.warning("leader election: %s", err)
            return False
        self.observed, self.observed_at = _record(updated), self.clock()
        return True

    def _create(self, now: Time) -> bool:
        c = self.config
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": c.name, "namespace": c.namespace},
            "spec": {
                "holderIdentity": self.identity,
                "leaseDurationSeconds": int(c.lease_duration),
                "acquireTime": micro_time(now),
                "renewTime": micro_time(now),
                "leaseTransitions": 0,
            },
        }
        path = f"/apis/coordination.k8s.io/v1/namespaces/{c.namespace}/leases"
        try:
            created = self.client.request("POST", path, body=body, what="create lease")
        except ClusterError as err:
            if err.status != 409:  # 409: another candidate created it first
                log.warning("leader election: %s", err)
            return False
        self.observed, self.observed_at = _record(created), self.clock()
        return True

    def _wait(self, seconds: float) -> bool:
        """Sleep ``seconds`` (False when stopped meanwhile)."""
        return not self._stopped.wait(seconds)

    def run(
        self, on_started_leading: Callable[[], None], on_stopped_leading: Callable[[], None]
    ) -> None:
        """Acquire, lead, renew; return when the lease is lost or ``stop()`` is called."""
        c = self.config
        while not self.try_acquire_or_renew():
            if not self._wait(c.retry_period * (1 + self.rng.random() * JITTER)):
                return
        self.leading = True
        log.info("leader election: %s acquired lease %s/%s", self.identity, c.namespace, c.name)
        on_started_leading()
        last = self.clock()
        try:
            while self._wait(c.retry_period):
                if self.try_acquire_or_renew():
                    last = self.clock()
                elif self.clock() - last >= c.renew_deadline or self._lost():
                    log.warning("leader election: %s lost lease %s", self.identity, c.name)
                    return
            self._release()
        finally:
            self.leading = False
            on_stopped_leading()

    def _lost(self) -> bool:
        """Another candidate holds the lease now (seen in the last attempt)."""
        return self.observed is not None and self.observed[0] not in ("", self.identity)

    def _release(self) -> None:
        """Give the lease up (ReleaseOnCancel)."""
        try:
            lease = self.client.request("GET", self._path, what="get lease")
            spec = dict(lease.get("spec") or {})
            if spec.get("holderIdentity") != self.identity:
                return
            spec.update(
                holderIdentity=None, leaseDurationSeconds=1, renewTime=micro_time(self.wall())
            )
            self.client.request(
                "PUT", self._path, body={**lease, "spec": spec}, what="release lease"
            )
        except ClusterError as err:
            log.warning("leader election: %s", err)

    def stop(self) -> None:
        """End ``run`` (any thread); a leader releases the lease first."""
        self._stopped.set()
