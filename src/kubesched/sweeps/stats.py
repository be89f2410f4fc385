"""Mean and 95 % confidence interval across seeds, with Student's t.

The interval of ``n`` values with mean ``m`` and sample standard deviation ``s``
(``n - 1`` in the denominator) is ``m ± t(0.975, n - 1) · s / √n``: the two-sided
95 % interval of the mean under Student's t with ``n - 1`` degrees of freedom.
With one value the interval is undefined (NaN); with none the mean is too.

``t_quantile`` is exact to float precision: it inverts (by bisection) the closed
form of the t distribution's two-sided probability for integer degrees of freedom
(Abramowitz & Stegun 26.7.3/26.7.4), so no SciPy is needed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache

CONFIDENCE = 0.95


def _central(t: float, df: int) -> float:
    """P(|T| <= t) for T ~ Student t with ``df`` >= 1 degrees of freedom, t >= 0."""
    theta = math.atan(t / math.sqrt(df))
    c2 = math.cos(theta) ** 2
    if df % 2:  # odd: (2/pi)(theta + sin cos (1 + 2/3 cos^2 + (2*4)/(3*5) cos^4 ...))
        total, term = 0.0, math.cos(theta)
        for k in range(1, df - 1, 2):
            total += term
            term *= c2 * (k + 1) / (k + 2)
        return 2 / math.pi * (theta + math.sin(theta) * total)
    total, term = 0.0, 1.0  # even: sin (1 + 1/2 cos^2 + (1*3)/(2*4) cos^4 ...)
    for k in range(1, df, 2):
        total += term
        term *= c2 * k / (k + 1)
    return math.sin(theta) * total


@cache
def t_quantile(df: int, confidence: float = CONFIDENCE) -> float:
    """The ``t`` with P(|T| <= t) = ``confidence`` for ``df`` degrees of freedom
    (``t_quantile(9) = 2.2622…``); ValueError unless ``df`` >= 1."""
    if df < 1:
        raise ValueError("degrees of freedom must be at least 1")
    lo, hi = 0.0, 1.0
    while _central(hi, df) < confidence:
        lo, hi = hi, hi * 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):
            break
        if _central(mid, df) < confidence:
            lo = mid
        else:
            hi = mid
    return hi


def mean_ci(values: Sequence[float]) -> tuple[float, float, float]:
    """(mean, low, high) of ``values`` (NaNs dropped first); see the module."""
    xs = [float(v) for v in values if not math.isnan(v)]
    n = len(xs)
    if n == 0:
        return math.nan, math.nan, math.nan
    mean = math.fsum(xs) / n
    if n == 1:
        return mean, math.nan, math.nan
    sd = math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / (n - 1))
    half = t_quantile(n - 1) * sd / math.sqrt(n)
    return mean, mean - half, mean + half
