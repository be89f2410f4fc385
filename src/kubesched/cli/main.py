"""``kubesched`` command line.

Exit codes: 0 the command completed; 2 bad input or bad flags (one line on
stderr naming file, object and field); 3 a ``--assert`` gate was violated (the
output is complete; one line per violated gate on stderr); 4 a live cluster
could not be read (one line naming the request and the server's answer); 1 an
internal error.
"""

from __future__ import annotations

import os
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any, NoReturn, TypeVar

import click

from kubesched import __version__
from kubesched.api.errors import InputError
from kubesched.api.input_limits import DEFAULT_MAX_OBJECTS
from kubesched.cli import trace_commands
from kubesched.cli.params import DURATION, SIZE, cluster_options, runspec_from_options

F = TypeVar("F", bound=Callable[..., Any])

EXIT_INTERNAL = 1
EXIT_INPUT = 2
EXIT_ASSERT = 3


def fail_input(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(EXIT_INPUT)


LAZY_COMMANDS: dict[str, tuple[str, str]] = {
    "bench": ("kubesched.cli.bench_command", "bench_cmd"),
    "snapshot": ("kubesched.cli.live_commands", "snapshot"),
    "run": ("kubesched.cli.live_commands", "run"),
    "explain": ("kubesched.cli.explain_command", "explain"),
    "compare": ("kubesched.cli.compare_command", "compare"),
    "sweep": ("kubesched.cli.sweep_command", "sweep_cmd"),
}
"""Commands imported when invoked (or listed): live mode and the benchmarks pull in
modules that ``simulate`` never needs, and a command line starts faster without."""


class KubeschedGroup(click.Group):
    """Turns errors into the documented exit codes, never a traceback for bad input;
    imports the ``LAZY_COMMANDS`` on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *LAZY_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        lazy = LAZY_COMMANDS.get(cmd_name)
        if lazy is not None and cmd_name not in self.commands:
            import importlib

            command = getattr(importlib.import_module(lazy[0]), lazy[1])
            assert isinstance(command, click.Command)
            self.add_command(command, name=cmd_name)
        return super().get_command(ctx, cmd_name)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except InputError as err:
            fail_input(str(err))
        except click.UsageError as err:
            fail_input(err.format_message())
        except (click.exceptions.Exit, click.exceptions.Abort, click.ClickException):
            raise
        except BrokenPipeError:
            sys.exit(0)
        except Exception as err:  # an internal error: say so, with the trace for a report
            click.echo(f"internal error: {type(err).__name__}: {err}", err=True)
            click.echo(traceback.format_exc(), err=True)
            sys.exit(EXIT_INTERNAL)


@click.group(cls=KubeschedGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kubesched")
def main() -> None:
    """kubesched: what kube-scheduler will do, with priorities and preemption."""


def _progress_enabled(output: str) -> bool:
    """A progress bar on a terminal, never for machine-readable output or under CI."""
    return output in ("table", "wide") and sys.stderr.isatty() and not os.environ.get("CI")


@main.command()
@click.option(
    "-f",
    "--filename",
    "files",
    multiple=True,
    help="File, directory (*.yaml, *.yml, *.json) or - for stdin; repeatable.",
)
@click.option("--config", "config_file", default=None, help="A KubeSchedulerConfiguration file.")
@click.option("--seed", default=0, show_default=True, type=int, help="Seeds every random choice.")
@click.option("--until", default=None, type=DURATION, help="Stop the simulated clock here.")
@click.option(
    "-o",
    "--output",
    default="table",
    show_default=True,
    type=click.Choice(["table", "wide", "json", "yaml", "jsonl"]),
)
@click.option("--watch", is_flag=True, help="Print each pod change in time order first.")
@click.option(
    "--feature-gates",
    default="",
    help="As kube-scheduler's flag; honoured: SchedulerAsyncPreemption (default true).",
)
@click.option(
    "--exact",
    "--per-node",
    "per_node",
    is_flag=True,
    help="Run every plugin's per-node code only (no vectorised path); same decisions, slower.",
)
@click.option(
    "--max-input-bytes",
    default="512Mi",
    show_default=True,
    type=SIZE,
    help="Refuse more input than this (bytes, or a quantity such as 512Mi or 1Gi).",
)
@click.option(
    "--max-objects",
    default=DEFAULT_MAX_OBJECTS,
    show_default=True,
    type=click.IntRange(min=1),
    help="Refuse more objects than this, counting the pods of workloads' replicas.",
)
@click.option(
    "--trace",
    "trace_spec",
    default=None,
    metavar="FORMAT:PATH[,PATH...]",
    help="Replay a cluster trace, e.g. openb:NODES.csv,PODS.csv (see docs/traces.md).",
)
@click.option(
    "--from-cluster",
    is_flag=True,
    help="Start from a live cluster's state (as `kubesched snapshot` reads it); "
    "-f adds what-if objects.",
)
@click.option(
    "-n", "--namespace", default=None, help="Show only this namespace's pods in the tables."
)
@click.option(
    "-l",
    "--selector",
    default=None,
    help="Show only pods matching this label selector in the tables (app=web,tier!=db).",
)
@click.option(
    "--report",
    "report_file",
    default=None,
    metavar="FILE.html",
    help="Also write a self-contained HTML report (plots) of the run.",
)
@click.option(
    "--show",
    "show",
    multiple=True,
    type=click.Choice(["nodes"]),
    help="nodes: each node's requested/allocatable and pods (a table; `nodes` in -o json/yaml).",
)
@click.option(
    "--assert",
    "assertions",
    multiple=True,
    metavar="EXPR",
    help="A CI gate, e.g. 'pending(priority>=1000) == 0', 'preemptions <= 5', "
    "'delay.p99 <= 30s' (docs/simulate-interface.md); repeatable; violated: exit 3.",
)
@click.option(
    "--explain",
    is_flag=True,
    help="Add why every scheduling attempt ended as it did (the result's explanations).",
)
@cluster_options
@trace_commands.trace_options(seed=False)
def simulate(
    files: tuple[str, ...],
    until: int | None,
    output: str,
    watch: bool,
    trace_spec: str | None,
    from_cluster: bool,
    assertions: tuple[str, ...],
    show: tuple[str, ...],
    report_file: str | None,
    namespace: str | None,
    selector: str | None,
    explain: bool,
    kubeconfig: str | None,
    context: str | None,
    **flags: Any,  # the rest of the RunSpec's flags: runspec_from_options reads them
) -> None:
    """Run manifests (or a cluster trace) on the embedded simulated cluster and
    report every decision."""
    from kubesched.api.selector_text import parse_selector_text
    from kubesched.cli import render
    from kubesched.cli.explain_command import pending_reasons
    from kubesched.cli.input import load_input
    from kubesched.driver.gates import GateError
    from kubesched.driver.gates import parse as parse_gate
    from kubesched.driver.nodes_report import node_entries
    from kubesched.sim import runspec

    try:
        checks = [parse_gate(a) for a in assertions]
    except GateError as err:
        fail_input(f"--assert {err}")
    try:
        keep = render.pod_filter(
            namespace, parse_selector_text(selector) if selector is not None else None
        )
    except ValueError as err:
        fail_input(f"--selector: {err}")
    if trace_spec is None and not files and not from_cluster:
        fail_input("-f: required (or --trace, or --from-cluster)")
    if from_cluster and trace_spec is not None:
        fail_input("--from-cluster and --trace: use one of them")
    if (kubeconfig or context) and not from_cluster:
        fail_input("--kubeconfig and --context need --from-cluster")
    spec = runspec_from_options()
    loaded = load_input(spec, from_cluster, kubeconfig, context)
    started = time.perf_counter()
    end = loaded.end if until is None else min(until, loaded.end)
    with render.SimulatedTimeProgress(end, enabled=_progress_enabled(output)) as progress:
        run = runspec.execute(
            spec, loaded, watch=watch, explain=explain or output == "wide", progress=progress.update
        )
    wall = time.perf_counter() - started
    machine = output in ("json", "yaml", "jsonl")
    doc = None
    if report_file is not None or machine or checks:
        doc = runspec.document(run, loaded, nodes=machine and "nodes" in show)
    if report_file is not None:
        assert doc is not None
        write_report(report_file, doc, run.record)
    out = click.get_text_stream("stdout")
    if machine:
        assert doc is not None
        if output == "json":
            out.write(render.to_json(doc))
        elif output == "yaml":
            out.write(render.to_yaml(doc))
        else:
            changes = run.record.watch_lines if watch else ()
            for line in render.to_jsonl(doc, changes):
                out.write(line)
        _enforce(checks, doc)
        return
    if watch:
        out.write(render.watch_table(run.record, keep))
        out.write("\n")
    reasons = pending_reasons(run.explanations) if run.explanations is not None else None
    out.write(
        render.pods_table(
            run.record, run.end_time, wide=output == "wide", reasons=reasons, keep=keep
        )
    )
    if "nodes" in show:
        out.write("\n")
        out.write(render.nodes_table(node_entries(run.record)))
    click.echo(render.summary_line(run.record, run.end_time, wall), err=True)
    if loaded.trace is not None:
        trace_commands.echo_replay_summary(run)
    if doc is not None:
        _enforce(checks, doc)


def write_report(path: str, doc: dict[str, Any], record: Any) -> None:
    """The HTML report of ``doc`` (with each node and pod's requests) to ``path``."""
    from kubesched.driver.nodes_report import add_requests, node_entries
    from kubesched.report.html import render

    doc = {**doc, "pods": [dict(p) for p in doc["pods"]], "nodes": node_entries(record)}
    add_requests(doc, record)
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write(render(doc))
    except OSError as err:
        fail_input(f"--report {path}: {err.strerror}")


@main.command("report")
@click.argument("result_file", metavar="RESULT.json")
@click.option("-o", "--output", "html_file", required=True, metavar="FILE.html")
def report(result_file: str, html_file: str) -> None:
    """Write the HTML report of a saved SimulationResult (-o json or yaml)."""
    from kubesched.api.parsing import parse_yaml
    from kubesched.report.html import render

    try:
        with open(result_file, encoding="utf-8") as f:
            docs = parse_yaml(f.read(), result_file)  # bad YAML/JSON: InputError, exit 2
    except OSError as err:
        fail_input(f"{result_file}: {err.strerror}")
    doc = docs[0] if len(docs) == 1 else None
    if not isinstance(doc, dict) or doc.get("kind") != "SimulationResult":
        fail_input(f"{result_file}: not a SimulationResult document")
    try:
        with open(html_file, "w", encoding="utf-8") as f:
            f.write(render(doc))
    except OSError as err:
        fail_input(f"-o {html_file}: {err.strerror}")


def _enforce(checks: list[Any], doc: dict[str, Any]) -> None:
    """Report violated ``--assert`` gates on stderr and exit 3 (after the output)."""
    from kubesched.driver.gates import check

    violated = check(doc, checks)
    for v in violated:
        click.echo(v.message(), err=True)
    if violated:
        sys.stdout.flush()
        sys.exit(EXIT_ASSERT)


main.add_command(trace_commands.import_, name="import")


if __name__ == "__main__":
    main()
