"""``kubesched sweep``: many simulations on Dask, one table (``kubesched.sweeps``).

Needs the ``sweep`` extra; without it the command ends with exit 2 and one line
saying what to install. Bad flags and bad parameter values exit 2 before any run;
a run that fails is a row with its error (the command still exits 0).
"""

from __future__ import annotations

import math
import os
import sys
from typing import TYPE_CHECKING, Any

import click

from kubesched.api.errors import InputError
from kubesched.api.input_limits import DEFAULT_MAX_OBJECTS
from kubesched.cli import trace_commands
from kubesched.cli.params import DURATION, SIZE, runspec_from_options

if TYPE_CHECKING:
    import pandas as pd


@click.command("sweep")
@click.option(
    "-f",
    "--filename",
    "files",
    multiple=True,
    help="File or directory of manifests (as simulate's -f; not stdin); repeatable.",
)
@click.option(
    "--trace",
    "trace_spec",
    default=None,
    metavar="FORMAT:PATH[,PATH...]",
    help="Replay a cluster trace in every run (docs/traces.md).",
)
@click.option(
    "--config",
    "configs",
    multiple=True,
    metavar="FILE",
    help="A KubeSchedulerConfiguration to compare; repeatable (none: the default profile).",
)
@click.option(
    "--seeds",
    default="0",
    show_default=True,
    metavar="N-M,...",
    help="The seeds of every configuration: 0-99, 1,5,9, 0-9,20-29.",
)
@click.option(
    "--param",
    "param_texts",
    multiple=True,
    metavar="NAME=V1,V2",
    help="Sweep a flag over values: until, sample, limit, time-scale, node-fraction, "
    "drop-nodes, gpu-share, max-pods, no-deletions, or a feature gate "
    "(SchedulerAsyncPreemption=true,false); repeatable (docs/sweep.md).",
)
@click.option("--until", default=None, type=DURATION, help="Stop every run's clock here.")
@click.option("--feature-gates", default="", help="As simulate's, for every run.")
@click.option("--per-node", "per_node", is_flag=True, help="As simulate's --per-node.")
@click.option("--max-input-bytes", default="512Mi", show_default=True, type=SIZE)
@click.option(
    "--max-objects", default=DEFAULT_MAX_OBJECTS, show_default=True, type=click.IntRange(min=1)
)
@click.option(
    "-o",
    "--output",
    "rows_file",
    default=None,
    metavar="FILE",
    help="Write one row per run here (.csv, .parquet or .json, or --format).",
)
@click.option(
    "--summary",
    "summary_file",
    default=None,
    metavar="FILE",
    help="Write the per-configuration summary (mean, 95 % CI) here (same formats).",
)
@click.option(
    "--report",
    "report_file",
    default=None,
    metavar="FILE.html",
    help="Also write the summary as kubesched compare's HTML page (a column per "
    "configuration: means, 95 % CIs as error bars).",
)
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet", "json"]), default=None)
@click.option(
    "--scheduler-address",
    default=None,
    metavar="tcp://HOST:PORT",
    help="Run on this Dask cluster (default: an embedded LocalCluster).",
)
@click.option(
    "--workers",
    type=click.IntRange(min=1),
    default=None,
    help="Worker processes of the embedded LocalCluster (default: one per CPU).",
)
@trace_commands.trace_options(seed=False)
def sweep_cmd(
    files: tuple[str, ...],
    trace_spec: str | None,
    configs: tuple[str, ...],
    seeds: str,
    param_texts: tuple[str, ...],
    feature_gates: str,
    rows_file: str | None,
    summary_file: str | None,
    report_file: str | None,
    fmt: str | None,
    scheduler_address: str | None,
    workers: int | None,
    **flags: Any,  # the rest of the RunSpec's flags: runspec_from_options reads them
) -> None:
    """Run a scenario or trace over configurations x parameters x seeds on Dask.

    Prints the summary per configuration (mean and 95 % confidence interval across
    seeds, Student t); -o writes every run's row, --summary the summary, --report
    the comparison page.
    """
    from kubesched import sweeps

    try:
        sweeps.require()
    except ImportError as err:
        raise InputError(str(err)) from None
    from kubesched.sweeps.api import run_plan
    from kubesched.sweeps.plan import parse_param, parse_seeds, plan
    from kubesched.sweeps.table import format_of, summarize, write

    if not files and trace_spec is None:
        raise click.UsageError("-f or --trace: required")
    if "-" in files:
        raise click.UsageError("-f -: a sweep cannot read stdin (workers read the files)")
    if scheduler_address is not None and workers is not None:
        raise click.UsageError("--workers sizes the embedded cluster: not with --scheduler-address")
    for path in (rows_file, summary_file):
        if path is not None:
            try:
                format_of(path, fmt)
            except ValueError as err:
                raise click.UsageError(str(err)) from None
    combos = plan(
        runspec_from_options(),
        configs=list(configs) or [None],
        seeds=parse_seeds(seeds),
        params=[parse_param(p) for p in param_texts],
    )
    with _Progress(len(combos), enabled=sys.stderr.isatty() and not os.environ.get("CI")) as bar:
        rows = run_plan(combos, address=scheduler_address, workers=workers, progress=bar.advance)
    summary = summarize(rows)
    for flag, path, table in (("-o", rows_file, rows), ("--summary", summary_file, summary)):
        if path is not None:
            try:
                write(table, path, fmt)
            except OSError as err:
                raise InputError(str(err.strerror), field=f"{flag} {path}") from None
    if report_file is not None:
        from kubesched.sweeps.view import html

        try:
            with open(report_file, "w", encoding="utf-8") as f:
                f.write(html(rows, summary, feature_gates))
        except OSError as err:
            raise InputError(str(err.strerror), field=f"--report {report_file}") from None
    click.echo(summary_text(summary), nl=False)
    failed = int(rows["error"].notna().sum())
    click.echo(f"{len(rows)} runs, {failed} failed", err=True)
    for error in dict.fromkeys(rows["error"].dropna()):
        click.echo(f"error: {error}", err=True)


def _number(x: float) -> str:
    return "-" if math.isnan(x) else f"{x:.6g}"


def summary_text(summary: pd.DataFrame) -> str:
    """The summary as a text table: the configuration's columns, METRIC, RUNS, MEAN
    and 95% CI (``low..high``)."""
    from kubesched.cli.render import tabulate

    keys = list(summary.columns[: list(summary.columns).index("metric")])
    head = [k.upper() for k in keys] + ["METRIC", "RUNS", "MEAN", "95% CI"]
    body = [
        [
            *(str(r[k]) for k in keys),
            r["metric"],
            str(r["runs"]),
            _number(r["mean"]),
            "-"
            if math.isnan(r["ci95_low"])
            else f"{_number(r['ci95_low'])}..{_number(r['ci95_high'])}",
        ]
        for r in summary.to_dict(orient="records")
    ]
    return tabulate([head, *body])


class _Progress:
    """A rich progress bar over runs on stderr (``advance()``); a no-op when disabled."""

    def __init__(self, total: int, *, enabled: bool) -> None:
        self.total = total
        self._bar: Any = None
        self._task: Any = None
        self.enabled = enabled

    def __enter__(self) -> _Progress:
        if self.enabled:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

            self._bar = Progress(
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                transient=True,
                console=Console(stderr=True),
            )
            self._task = self._bar.add_task("runs", total=self.total)
            self._bar.start()
        return self

    def advance(self) -> None:
        if self._bar is not None:
            self._bar.advance(self._task)

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()
