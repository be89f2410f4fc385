"""``kubesched bench WORKLOAD``: upstream scheduler_perf workloads, timed."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

import click

from kubesched.sim import bench


def _progress_enabled(output: str) -> bool:
    return output != "json" and sys.stderr.isatty() and not os.environ.get("CI")


@click.command("bench")
@click.argument("workload_name", metavar="WORKLOAD", type=click.Choice(sorted(bench.WORKLOADS)))
@click.option("--nodes", type=click.IntRange(min=1), default=None, help="Default: 5000.")
@click.option("--init-pods", type=click.IntRange(min=0), default=None)
@click.option("--pods", type=click.IntRange(min=1), default=None, help="Measured pods.")
@click.option(
    "--preemptor-template",
    type=click.Choice(sorted(bench.PREEMPTOR_TEMPLATES)),
    default=None,
    help=(
        "PreemptionBasic/PreemptionAsync preemptor: default-preemption (upstream's "
        "default_preemption/templates/pod-high-priority.yaml, 3970m, priority 10000; "
        "the default) or legacy-3cpu (templates/pod-high-priority.yaml, 3 CPU, priority 10)."
    ),
)
@click.option("--seed", type=int, default=0, show_default=True)
@click.option(
    "--exact",
    "--per-node",
    "per_node",
    is_flag=True,
    help="Run every plugin's per-node code only (no vectorised path).",
)
@click.option(
    "--explain",
    is_flag=True,
    help="Record every attempt's explanation, as simulate --explain does (to measure its cost).",
)
@click.option("-o", "--output", type=click.Choice(["table", "json"]), default="table")
def bench_cmd(
    workload_name: str,
    nodes: int | None,
    init_pods: int | None,
    pods: int | None,
    preemptor_template: str | None,
    seed: int,
    per_node: bool,
    explain: bool,
    output: str,
) -> None:
    """Run an upstream scheduler_perf workload (SchedulingBasic, PreemptionBasic,
    PreemptionAsync, Unschedulable) and report its throughput.

    Defaults are upstream's 5000Nodes variants. Throughput is measured pods
    scheduled per wall-clock second of the measured phase."""
    try:
        wl = bench.workload(workload_name, nodes, init_pods, pods, preemptor_template)
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="'--preemptor-template'") from None
    progress: Callable[[int, int], None] | None = None
    bar: Any = None
    if _progress_enabled(output):
        from rich.console import Console
        from rich.progress import Progress

        bar = Progress(transient=True, console=Console(stderr=True))
        task = bar.add_task(f"{wl.name} (measured pods)", total=wl.measured_pods)
        bar.start()

        def progress(done: int, total: int) -> None:
            bar.update(task, completed=done)

    try:
        result = bench.run(wl, seed=seed, per_node=per_node, progress=progress, explain=explain)
    finally:
        if bar is not None:
            bar.stop()
    doc = result.as_dict()
    if output == "json":
        click.echo(json.dumps(doc))
        return
    width = max(len(k) for k in doc)
    for k, v in doc.items():
        click.echo(f"{k.ljust(width)}  {v}")
