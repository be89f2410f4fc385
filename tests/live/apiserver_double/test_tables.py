"""tables.py: upstream's duration.HumanDuration, case by case (TestHumanDuration)."""

from __future__ import annotations

import pytest

from kubesched.live.apiserver_double.tables import human_duration

H = 3600


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        pytest.param(1, "1s", id="TestHumanDuration/1s"),
        pytest.param(70, "70s", id="TestHumanDuration/70s"),
        pytest.param(190, "3m10s", id="TestHumanDuration/190s"),
        pytest.param(70 * 60, "70m", id="TestHumanDuration/70m"),
        pytest.param(47 * H, "47h", id="TestHumanDuration/47h"),
        pytest.param(49 * H, "2d1h", id="TestHumanDuration/49h"),
        pytest.param((8 * 24 + 2) * H, "8d", id="TestHumanDuration/8d2h"),
        pytest.param(367 * 24 * H, "367d", id="TestHumanDuration/367d"),
        pytest.param((365 * 2 * 24 + 25) * H, "2y1d", id="TestHumanDuration/2y1d1h"),
        pytest.param((365 * 8 * 24 + 2) * H, "8y", id="TestHumanDuration/8y2h"),
        pytest.param(-1, "0s", id="TestHumanDuration/almost-now"),
        pytest.param(-2, "<invalid>", id="TestHumanDuration/invalid"),
    ],
)
def test_human_duration(seconds: int, expected: str) -> None:
    assert human_duration(seconds) == expected
