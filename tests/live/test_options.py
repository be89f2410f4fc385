"""kubesched.live.options: leaderElection and clientConnection of a configuration."""

from __future__ import annotations

import pytest

from kubesched.api.errors import InputError
from kubesched.live.client import TokenBucket
from kubesched.live.leader import LeaseConfig
from kubesched.live.options import LiveOptions, live_options


def test_defaults_are_v1s_with_kubescheds_own_lease() -> None:
    got = live_options({})
    assert got == LiveOptions(LeaseConfig("kube-system", "kubesched", 15.0, 10.0, 2.0), 50.0, 100)


def test_fields_are_read() -> None:
    got = live_options(
        {
            "leaderElection": {
                "leaseDuration": "30s",
                "renewDeadline": "20s",
                "retryPeriod": "500ms",
                "resourceName": "kube-scheduler",
                "resourceNamespace": "sched",
            },
            "clientConnection": {"qps": 5, "burst": 10},
        }
    )
    assert got == LiveOptions(LeaseConfig("sched", "kube-scheduler", 30.0, 20.0, 0.5), 5.0, 10)
    assert live_options({"leaderElection": {"leaderElect": False}}).leader is None


@pytest.mark.parametrize(
    ("raw", "field", "message"),
    [
        (
            {"leaderElection": {"resourceLock": "endpoints"}},
            "leaderElection.resourceLock",
            "must be",
        ),
        (
            {"leaderElection": {"leaseDuration": "10s", "renewDeadline": "10s"}},
            "leaderElection.leaseDuration",
            "LeaseDuration must be greater than RenewDeadline",
        ),
        ({"leaderElection": {"retryPeriod": "0s"}}, "leaderElection.retryPeriod", "greater than"),
        ({"leaderElection": {"leaseDuration": 15}}, "leaderElection.leaseDuration", "duration"),
        ({"leaderElection": {"leaderElect": "yes"}}, "leaderElection.leaderElect", "boolean"),
        ({"clientConnection": {"burst": -1}}, "clientConnection.burst", "non-negative"),
        ({"clientConnection": {"qps": "fast"}}, "clientConnection.qps", "number"),
    ],
)
def test_bad_values_name_the_field(raw: dict[str, object], field: str, message: str) -> None:
    with pytest.raises(InputError) as err:
        live_options(raw, "config.yaml")
    assert err.value.field == field and message in str(err.value)
    assert "config.yaml" in str(err.value)


def test_token_bucket_allows_a_burst_then_qps() -> None:
    now = [0.0]
    slept: list[float] = []

    def sleep(s: float) -> None:
        slept.append(s)
        now[0] += s

    bucket = TokenBucket(2.0, 3, clock=lambda: now[0], sleep=sleep)
    assert [bucket.take() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take() == pytest.approx(0.5)
    assert bucket.take() == pytest.approx(0.5)
    now[0] += 10  # refills up to the burst only
    assert [bucket.take() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert bucket.take() == pytest.approx(0.5)
    assert TokenBucket(0.0, 0).take() == 0.0


def test_a_fresh_bucket_is_full_and_its_own() -> None:
    now = [0.0]
    bucket = TokenBucket(1.0, 1, clock=lambda: now[0], sleep=lambda s: None)
    assert bucket.take() == 0.0
    other = bucket.fresh()
    assert (other.qps, other.burst) == (1.0, 1)
    assert other.take() == 0.0
    assert bucket.take() == pytest.approx(1.0)
    assert other.take() == pytest.approx(1.0)
