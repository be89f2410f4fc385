"""Student-t confidence intervals (checked against published t-table values and
against the definition of the interval)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.sweeps.stats import _central, mean_ci, t_quantile

# Two-sided 95 % critical values of Student's t (any statistics table).
TABLE = {
    1: 12.706,
    2: 4.303,
    3: 3.182,
    4: 2.776,
    5: 2.571,
    9: 2.262,
    10: 2.228,
    20: 2.086,
    30: 2.042,
    60: 2.000,
    120: 1.980,
}


@pytest.mark.parametrize(("df", "value"), sorted(TABLE.items()))
def test_t_quantile_matches_the_table(df: int, value: float) -> None:
    assert t_quantile(df) == pytest.approx(value, abs=5e-4)


def test_t_quantile_tends_to_the_normal_one() -> None:
    assert t_quantile(100_000) == pytest.approx(1.959964, abs=1e-4)
    assert t_quantile(9, 0.99) == pytest.approx(3.250, abs=5e-4)
    with pytest.raises(ValueError, match="at least 1"):
        t_quantile(0)


@given(st.integers(1, 400), st.floats(0.5, 0.999))
def test_the_quantile_inverts_the_distribution(df: int, p: float) -> None:
    assert _central(t_quantile(df, p), df) == pytest.approx(p, abs=1e-9)


def test_mean_ci_of_known_numbers() -> None:
    mean, low, high = mean_ci([1, 2, 3, 4, 5])
    half = 2.776445 * math.sqrt(2.5) / math.sqrt(5)  # t(0.975, 4) * s / sqrt(n)
    assert mean == 3
    assert (low, high) == (pytest.approx(3 - half), pytest.approx(3 + half))


def test_mean_ci_degenerate_cases() -> None:
    assert mean_ci([7.0, 7.0, 7.0]) == (7.0, 7.0, 7.0)
    mean, low, high = mean_ci([4.0, math.nan])  # failed runs are NaN: dropped
    assert mean == 4.0
    assert math.isnan(low) and math.isnan(high)
    assert all(math.isnan(x) for x in mean_ci([]))


@given(st.lists(st.floats(-1e6, 1e6), min_size=2, max_size=50))
def test_the_interval_is_centred_on_the_mean(xs: list[float]) -> None:
    mean, low, high = mean_ci(xs)
    assert low <= mean <= high
    assert (mean - low) == pytest.approx(high - mean, rel=1e-9, abs=1e-6)
