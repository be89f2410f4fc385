"""kubesched.live.leader against the API-server double: client-go's lease rules."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import pytest

from kubesched.live.apiserver_double import ApiServerDouble
from kubesched.live.client import connect
from kubesched.live.leader import LeaderElector, LeaseConfig
from tests.live.cluster_state import double, wait_for

pytest.importorskip("kubernetes")


class Clock:
    def __init__(self) -> None:
        self.t = 100.0

    def __call__(self) -> float:
        return self.t


def elector(
    api: ApiServerDouble,
    tmp_path: Path,
    who: str,
    clock: Clock | None = None,
    config: LeaseConfig | None = None,
) -> LeaderElector:
    client = connect(str(api.write_kubeconfig(tmp_path / f"kc-{who}")))
    return LeaderElector(
        client, who, config or LeaseConfig(), clock=clock or time.monotonic, rng=random.Random(0)
    )


def lease(api: ApiServerDouble) -> dict[str, object]:
    got = api.get("coordination.k8s.io/v1", "Lease", "kubesched", "kube-system")
    assert got is not None
    spec = got["spec"]
    assert isinstance(spec, dict)
    return spec


def test_the_first_candidate_creates_the_lease_and_renews_it(tmp_path: Path) -> None:
    with double() as api:
        a = elector(api, tmp_path, "a")
        assert a.try_acquire_or_renew()
        first = lease(api)
        assert first["holderIdentity"] == "a" and first["leaseTransitions"] == 0
        assert first["leaseDurationSeconds"] == 15
        assert a.try_acquire_or_renew()
        again = lease(api)
        assert again["acquireTime"] == first["acquireTime"] and again["leaseTransitions"] == 0


def test_a_held_lease_is_taken_only_after_it_expires_on_the_local_clock(tmp_path: Path) -> None:
    clock = Clock()
    with double() as api:
        a = elector(api, tmp_path, "a")
        b = elector(api, tmp_path, "b", clock)
        assert a.try_acquire_or_renew()
        assert not b.try_acquire_or_renew()  # b sees the record for the first time now
        clock.t += 14.9
        assert not b.try_acquire_or_renew()
        clock.t += 0.2  # 15.1 s after b last saw the record change: expired
        assert b.try_acquire_or_renew()
        spec = lease(api)
        assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1
        # a's next attempt sees b's fresh record: it may not take it back.
        assert not a.try_acquire_or_renew()


def test_a_renewal_keeps_the_lease_from_expiring(tmp_path: Path) -> None:
    clock = Clock()
    with double() as api:
        a = elector(api, tmp_path, "a")
        b = elector(api, tmp_path, "b", clock)
        assert a.try_acquire_or_renew()
        assert not b.try_acquire_or_renew()
        for _ in range(5):
            clock.t += 10
            assert a.try_acquire_or_renew()  # renewTime changes: b sees a new record
            assert not b.try_acquire_or_renew()


def test_a_write_in_between_is_a_conflict_not_a_takeover(tmp_path: Path) -> None:
    clock = Clock()
    with double() as api:
        a = elector(api, tmp_path, "a")
        assert a.try_acquire_or_renew()
        b = elector(api, tmp_path, "b", clock)
        assert not b.try_acquire_or_renew()
        clock.t += 16
        api.steal_lease("kube-system", "kubesched", "c")  # c writes first
        assert not b.try_acquire_or_renew()
        assert lease(api)["holderIdentity"] == "c"


def run_in_thread(e: LeaderElector, log: list[str]) -> threading.Thread:
    t = threading.Thread(
        target=e.run,
        args=(lambda: log.append(f"+{e.identity}"), lambda: log.append(f"-{e.identity}")),
        daemon=True,
    )
    t.start()
    return t


FAST = LeaseConfig(lease_duration=1.0, renew_deadline=0.5, retry_period=0.05)


def test_of_two_running_candidates_exactly_one_leads_then_the_other_takes_over(
    tmp_path: Path,
) -> None:
    log: list[str] = []
    with double() as api:
        a = elector(api, tmp_path, "a", config=FAST)
        b = elector(api, tmp_path, "b", config=FAST)
        ta = run_in_thread(a, log)
        wait_for(lambda: a.leading)
        tb = run_in_thread(b, log)
        time.sleep(0.3)
        assert a.leading and not b.leading and log == ["+a"]
        a.stop()  # releases the lease: b takes it without waiting for expiry
        ta.join(5)
        wait_for(lambda: b.leading)
        assert log == ["+a", "-a", "+b"]
        assert lease(api)["holderIdentity"] == "b"
        b.stop()
        tb.join(5)
        assert log[-1] == "-b"
        assert not lease(api)["holderIdentity"]


def test_a_leader_whose_lease_is_taken_stops_at_once(tmp_path: Path) -> None:
    log: list[str] = []
    with double() as api:
        a = elector(api, tmp_path, "a", config=FAST)
        ta = run_in_thread(a, log)
        wait_for(lambda: a.leading)
        api.steal_lease("kube-system", "kubesched", "intruder")
        ta.join(2)
        assert not ta.is_alive() and log == ["+a", "-a"]
        assert lease(api)["holderIdentity"] == "intruder"
