"""Live mode's part of a KubeSchedulerConfiguration: ``leaderElection`` and
``clientConnection`` (the scheduler core reads the rest and ignores these two).

Defaults are kubescheduler.config.k8s.io/v1's, except the lease's name: a
kubesched instance holds its own Lease (``kube-system/kubesched``), never the
cluster's ``kube-scheduler`` one, unless the configuration names it. Checks are
upstream's ValidateLeaderElectionConfiguration and ValidateClientConnection
ones, with their field paths and wording.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from kubesched.api.duration import parse_duration
from kubesched.api.errors import InputError
from kubesched.live.leader import LeaseConfig

DEFAULT_QPS: Final = 50.0
DEFAULT_BURST: Final = 100
DEFAULT_LEASE_NAME: Final = "kubesched"
RESOURCE_LOCK: Final = "leases"


@dataclass(frozen=True, slots=True)
class LiveOptions:
    """``leader`` None: leader election off (``leaderElect: false``)."""

    leader: LeaseConfig | None = field(default_factory=LeaseConfig)
    qps: float = DEFAULT_QPS
    burst: int = DEFAULT_BURST


def _fail(source: str, field: str, message: str) -> InputError:
    return InputError(message, source=source or None, field=field)


def _seconds(raw: Mapping[str, Any], key: str, default: float, source: str) -> float:
    value = raw.get(key)
    if value is None:
        return default
    field = f"leaderElection.{key}"
    if not isinstance(value, str):
        raise _fail(source, field, f"expected a duration string such as 15s, got {value!r}")
    try:
        return parse_duration(value) / 1e9
    except ValueError as err:
        raise _fail(source, field, str(err)) from None


def _mapping(raw: Mapping[str, Any], key: str, source: str) -> Mapping[str, Any]:
    value = raw.get(key)
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise _fail(source, key, f"expected a mapping, got {type(value).__name__}")
    return value


def live_options(raw: Mapping[str, Any], source: str = "") -> LiveOptions:
    """The options of one configuration document (see the module docstring)."""
    le = _mapping(raw, "leaderElection", source)
    cc = _mapping(raw, "clientConnection", source)
    qps = cc.get("qps", DEFAULT_QPS)
    burst = cc.get("burst", DEFAULT_BURST)
    if not isinstance(qps, int | float) or isinstance(qps, bool):
        raise _fail(source, "clientConnection.qps", f"expected a number, got {qps!r}")
    if not isinstance(burst, int) or isinstance(burst, bool):
        raise _fail(source, "clientConnection.burst", f"expected an integer, got {burst!r}")
    if burst < 0:
        raise _fail(source, "clientConnection.burst", "must be non-negative")
    elect = le.get("leaderElect", True)
    if not isinstance(elect, bool):
        raise _fail(source, "leaderElection.leaderElect", f"expected a boolean, got {elect!r}")
    if not elect:
        return LiveOptions(None, float(qps), burst)
    lock = le.get("resourceLock", RESOURCE_LOCK)
    if lock != RESOURCE_LOCK:
        raise _fail(
            source,
            "leaderElection.resourceLock",
            f'Invalid value: "{lock}": resourceLock value must be "leases"',
        )
    lease = LeaseConfig(
        namespace=str(le.get("resourceNamespace") or "kube-system"),
        name=str(le.get("resourceName") or DEFAULT_LEASE_NAME),
        lease_duration=_seconds(le, "leaseDuration", 15.0, source),
        renew_deadline=_seconds(le, "renewDeadline", 10.0, source),
        retry_period=_seconds(le, "retryPeriod", 2.0, source),
    )
    for key, value in (
        ("leaseDuration", lease.lease_duration),
        ("renewDeadline", lease.renew_deadline),
        ("retryPeriod", lease.retry_period),
    ):
        if value <= 0:
            raise _fail(source, f"leaderElection.{key}", "must be greater than zero")
    if lease.lease_duration <= lease.renew_deadline:
        raise _fail(
            source,
            "leaderElection.leaseDuration",
            "LeaseDuration must be greater than RenewDeadline",
        )
    return LiveOptions(lease, float(qps), burst)
