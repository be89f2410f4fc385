"""A sweep's tables (pandas DataFrames) and their files.

**Rows** (:func:`rows_frame`), one per run in the plan's order: ``config``, one
column per swept parameter (its value as given, text), ``seed``, the run's
figures (``kubesched.report.metrics.run_metrics``: counts as nullable integers,
``delay.*`` seconds and ``utilisation.*`` percents as floats), then ``error``
(empty for a run that finished). A failed run's figures are empty; a finished
run without pods of some priority class counts 0 of that class, and 0 %
utilisation of a resource no pod requests at its end (``run_metrics`` leaves
both out).

**Summary** (:func:`summarize`), one row per configuration (``config`` and the
parameters, in the rows' order) and figure: ``metric``, ``runs`` (the seeds
that gave a value), ``failed`` (the configuration's failed runs), ``mean``,
``ci95_low`` and ``ci95_high`` (Student t across seeds, see
:mod:`kubesched.sweeps.stats`).

Files (:func:`write`): CSV, Parquet (pyarrow) or JSON (a list of objects, NaN as
null); the same table gives the same bytes.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import pandas as pd

from kubesched.report.metrics import resource_order
from kubesched.sweeps.engine import Outcome
from kubesched.sweeps.plan import Combination
from kubesched.sweeps.stats import mean_ci

FORMATS: Final = ("csv", "parquet", "json")
UTILISATION: Final = "utilisation."
FLOAT_PREFIXES: Final = ("delay.", UTILISATION)


def _zero_if_absent(metric: str) -> bool:
    """``run_metrics`` leaves out a class without pods and a resource no pod
    requests at the end: for a run that finished, those figures are 0."""
    return "(class=" in metric or metric.startswith(UTILISATION)


def is_count(metric: str) -> bool:
    """Counts are integers; delays and utilisations are not."""
    return not metric.startswith(FLOAT_PREFIXES)


def _metric_order(outcomes: Sequence[Outcome]) -> list[str]:
    """The figures of all runs in ``run_metrics``' order: counts and delays, the
    resources' utilisations (cpu, memory, then by name), the per-class counts by
    class (``""``, no class, last; ``scheduled`` before ``pending``)."""
    seen: dict[str, None] = {}
    for o in outcomes:
        seen.update(dict.fromkeys(o.metrics))

    def by_class(metric: str) -> tuple[bool, str, bool]:
        name, _, cls = metric.partition("(class=")
        return cls == ")", cls, name != "scheduled"

    plain = [m for m in seen if "(class=" not in m and not m.startswith(UTILISATION)]
    used = sorted(
        (m for m in seen if m.startswith(UTILISATION)),
        key=lambda m: resource_order(m.removeprefix(UTILISATION)),
    )
    return plain + used + sorted((m for m in seen if "(class=" in m), key=by_class)


def rows_frame(combos: Sequence[Combination], outcomes: Sequence[Outcome]) -> pd.DataFrame:
    """The rows table of a finished sweep (see the module)."""
    params = [name for name, _ in combos[0].params] if combos else []
    metrics = _metric_order(outcomes)
    records: list[dict[str, Any]] = []
    for combo, out in zip(combos, outcomes, strict=True):
        rec: dict[str, Any] = {"config": combo.config, **dict(combo.params), "seed": combo.seed}
        for m in metrics:
            default = 0 if out.error is None and _zero_if_absent(m) else None
            rec[m] = out.metrics.get(m, default)
        rec["error"] = out.error
        records.append(rec)
    columns = ["config", *params, "seed", *metrics, "error"]
    df = pd.DataFrame.from_records(records, columns=columns)
    types = {m: "Int64" if is_count(m) else "float64" for m in metrics}
    return df.astype({"config": "str", **dict.fromkeys(params, "str"), "seed": "int64", **types})


def key_columns(rows: pd.DataFrame) -> list[str]:
    """The columns naming a configuration: those before ``seed``."""
    columns = list(rows.columns)
    return columns[: columns.index("seed")]


def metric_columns(rows: pd.DataFrame) -> list[str]:
    columns = list(rows.columns)
    return columns[columns.index("seed") + 1 : columns.index("error")]


def summarize(rows: pd.DataFrame) -> pd.DataFrame:
    """The summary table of a rows table (see the module)."""
    keys = key_columns(rows)
    records = []
    for key, group in rows.groupby(keys, sort=False, dropna=False):
        failed = int(group["error"].notna().sum())
        for m in metric_columns(rows):
            values = group[m].astype("float64").tolist()
            mean, low, high = mean_ci(values)
            records.append(
                {
                    **dict(zip(keys, key, strict=True)),
                    "metric": m,
                    "runs": sum(not math.isnan(v) for v in values),
                    "failed": failed,
                    "mean": mean,
                    "ci95_low": low,
                    "ci95_high": high,
                }
            )
    columns = [*keys, "metric", "runs", "failed", "mean", "ci95_low", "ci95_high"]
    return pd.DataFrame.from_records(records, columns=columns)


def format_of(path: str, fmt: str | None = None) -> str:
    """``fmt``, else the format of ``path``'s suffix; ValueError if neither is one of
    :data:`FORMATS`."""
    chosen = fmt or Path(path).suffix.lstrip(".").lower()
    if chosen not in FORMATS:
        raise ValueError(f"{path}: say the format (--format {'|'.join(FORMATS)}) or use a suffix")
    return chosen


def _plain(value: Any) -> Any:
    """A JSON value of a table cell: NaN/NA as None, numpy scalars as Python's."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return None
    return value.item() if hasattr(value, "item") else value


def write(table: pd.DataFrame, path: str, fmt: str | None = None) -> None:
    """Write ``table`` to ``path`` as ``fmt`` (default: by suffix, :func:`format_of`)."""
    chosen = format_of(path, fmt)
    if chosen == "csv":
        table.to_csv(path, index=False, lineterminator="\n")
    elif chosen == "parquet":
        table.to_parquet(path, index=False, engine="pyarrow")
    else:
        records = [
            {k: _plain(v) for k, v in rec.items()} for rec in table.to_dict(orient="records")
        ]
        Path(path).write_text(json.dumps(records, indent=1, allow_nan=False) + "\n")
