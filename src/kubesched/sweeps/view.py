"""A sweep's HTML page (``kubesched sweep --report``): the comparison view of
``kubesched compare`` (:mod:`kubesched.report.compare`) with one column per
configuration, its figures the means across seeds and their 95 % confidence
intervals as ``±`` and error bars.

Each configuration is a SimulationComparison variant: ``name`` says what
distinguishes it (the configuration file's stem and the swept ``NAME=VALUE``),
``config`` its file (null for the default profile), ``seed`` the seeds (``0-63``),
``featureGates`` the gates it ran with (``--feature-gates``, a swept gate's value
instead of the flag's), ``metrics`` the means and ``ci`` the
half-widths. A figure no seed gave is missing (``-``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from kubesched.report.compare import API_VERSION, KIND, render
from kubesched.scheduler.registry import FEATURE_GATES
from kubesched.sweeps.plan import DEFAULT_CONFIG


def seed_ranges(seeds: Sequence[int]) -> str:
    """``[0, 1, 2, 5]`` -> ``0-2,5`` (sorted, runs of consecutive seeds as ranges)."""
    out: list[str] = []
    ordered = sorted(set(seeds))
    start = prev = ordered[0] if ordered else 0
    for s in [*ordered[1:], None]:
        if s is not None and s == prev + 1:
            prev = s
            continue
        out.append(str(start) if start == prev else f"{start}-{prev}")
        if s is not None:
            start = prev = s
    return ",".join(out) if ordered else ""


def _name(config: str, values: dict[str, str], configs: int) -> str:
    stem = config if config == DEFAULT_CONFIG else Path(config).stem
    parts = [stem] if configs > 1 or not values else []
    return " ".join([*parts, *(f"{k}={v}" for k, v in values.items())])


def comparison(
    rows: pd.DataFrame, summary: pd.DataFrame, feature_gates: str = ""
) -> dict[str, Any]:
    """The SimulationComparison of a sweep: one variant per configuration of
    ``summary`` (``kubesched.sweeps.table``), seeds from ``rows``; ``feature_gates``:
    the gates every run had (``--feature-gates``)."""
    keys = list(summary.columns[: list(summary.columns).index("metric")])
    params = keys[1:]
    configs = summary["config"].nunique()
    seeds = seed_ranges(rows["seed"].tolist())
    variants = []
    for key, group in summary.groupby(keys, sort=False, dropna=False):
        values = dict(zip(params, key[1:], strict=True))
        gates = dict(g.strip().split("=", 1) for g in feature_gates.split(",") if "=" in g)
        gates.update((k, v.lower()) for k, v in values.items() if k in FEATURE_GATES)
        metrics: dict[str, float | None] = {}
        ci: dict[str, float] = {}
        for r in group.to_dict(orient="records"):
            metrics[r["metric"]] = None if math.isnan(r["mean"]) else r["mean"]
            if not math.isnan(r["ci95_high"]):
                ci[r["metric"]] = r["ci95_high"] - r["mean"]
        variants.append(
            {
                "name": _name(key[0], values, configs),
                "config": None if key[0] == DEFAULT_CONFIG else key[0],
                "seed": seeds,
                "featureGates": ",".join(f"{k}={v}" for k, v in gates.items()),
                "metrics": metrics,
                "ci": ci,
            }
        )
    return {"apiVersion": API_VERSION, "kind": KIND, "variants": variants}


def html(rows: pd.DataFrame, summary: pd.DataFrame, feature_gates: str = "") -> str:
    """The sweep's page (see the module)."""
    return render(comparison(rows, summary, feature_gates), title="kubesched sweep")
