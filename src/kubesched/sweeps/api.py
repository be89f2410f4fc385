"""``kubesched.sweep``: a parameter sweep from Python, as a pandas DataFrame.

>>> import kubesched
>>> rows = kubesched.sweep(trace="openb:traces/openb", seeds=range(8),
...                        params={"sample": [200, 400]})       # doctest: +SKIP
>>> kubesched.sweeps.api.summarize(rows)                        # doctest: +SKIP

Arguments mirror ``kubesched sweep``'s flags (see :func:`sweep`); bad input
raises ``InputError`` before any run, a failed run is a row with its ``error``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from kubesched import sweeps

sweeps.require()

import pandas as pd  # noqa: E402  (after require: a one-line error without the extra)

from kubesched.api.input_limits import DEFAULT_LIMITS, InputLimits  # noqa: E402
from kubesched.sim.runspec import RunSpec  # noqa: E402
from kubesched.sim.traces import ImportOptions  # noqa: E402
from kubesched.sweeps import engine  # noqa: E402
from kubesched.sweeps.plan import Combination, parse_seeds, plan  # noqa: E402
from kubesched.sweeps.table import rows_frame, summarize  # noqa: E402

if TYPE_CHECKING:
    from distributed import Client

__all__ = ["run_plan", "summarize", "sweep"]


def run_plan(
    combos: Sequence[Combination],
    *,
    address: str | None = None,
    workers: int | None = None,
    client: Client | None = None,
    progress: Callable[[], None] | None = None,
) -> pd.DataFrame:
    """The rows table of ``combos`` run on ``client``, else on the cluster at
    ``address``, else on an embedded LocalCluster of ``workers`` processes."""
    specs = [c.spec for c in combos]
    if client is not None:
        outcomes = engine.run_all(specs, client, progress)
    else:
        with engine.connect(address, workers) as own:
            outcomes = engine.run_all(specs, own, progress)
    return rows_frame(combos, outcomes)


def sweep(
    files: Sequence[str] = (),
    *,
    trace: str | None = None,
    configs: Sequence[str | None] = (None,),
    seeds: Iterable[int] | str = (0,),
    params: Mapping[str, Sequence[Any]] | None = None,
    until: int | None = None,
    feature_gates: str = "",
    per_node: bool = False,
    trace_options: ImportOptions | None = None,
    limits: InputLimits = DEFAULT_LIMITS,
    address: str | None = None,
    workers: int | None = None,
    client: Client | None = None,
    progress: Callable[[], None] | None = None,
) -> pd.DataFrame:
    """Run every combination of ``configs`` × ``params`` × ``seeds`` and return the
    rows table (:mod:`kubesched.sweeps.table`; ``summarize`` it for means and CIs).

    ``files``, ``trace`` (``FORMAT:PATH,...``), ``trace_options``, ``until``
    (nanoseconds), ``feature_gates``, ``per_node`` and ``limits`` are the fixed
    inputs, as ``simulate``'s flags; ``configs``: KubeSchedulerConfiguration files
    (``None``: the default profile); ``seeds``: integers or text like ``"0-99"``;
    ``params``: name -> values, as ``--param`` (:data:`kubesched.sweeps.plan.PARAMS`
    or a feature gate's name; values are written as text, so ``0.1`` and ``"10%"``
    both work). Runs go to ``client``, else the Dask scheduler at ``address``, else
    an embedded LocalCluster of ``workers`` processes (default: one per CPU);
    ``progress()`` is called after each run.
    """
    base = RunSpec(
        files=tuple(files),
        until=until,
        feature_gates=feature_gates,
        per_node=per_node,
        trace=trace,
        trace_options=trace_options or ImportOptions(),
        limits=limits,
    )
    combos = plan(
        base,
        configs=configs,
        seeds=parse_seeds(seeds) if isinstance(seeds, str) else seeds,
        params=[(name, [_text(v) for v in values]) for name, values in (params or {}).items()],
    )
    return run_plan(combos, address=address, workers=workers, client=client, progress=progress)


def _text(value: Any) -> str:
    """A parameter value as ``--param`` text (``True`` -> ``true``)."""
    return str(value).lower() if isinstance(value, bool) else str(value)
