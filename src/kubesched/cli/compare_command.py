"""``kubesched compare``: one scenario under several configurations, seeds or
feature gates, side by side.

The variants are every combination of the ``--config``, ``--seed`` and
``--feature-gates`` values given (at least two combinations); each runs
exactly as ``simulate`` would with those flags (``kubesched.sim.runspec``).
Output: the metrics table and the pods placed differently (``-o table``), the
SimulationComparison document (``-o json|yaml``, ``report.compare``), and
``--report FILE.html``.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any, Final

import click

from kubesched.api.errors import InputError
from kubesched.api.input_limits import DEFAULT_MAX_OBJECTS
from kubesched.cli import trace_commands
from kubesched.cli.params import DURATION, SIZE, runspec_from_options

DEFAULTS: Final = "default"
"""``--config default``: kube-scheduler's default configuration."""


def variant_names(configs: list[str | None], seeds: list[int], gates: list[str]) -> list[str]:
    """A short name per combination (config x seed x gates, in that order), from
    what varies: the config's file stem (its path when stems collide), ``seed=N``,
    the gates' text."""
    stems = [Path(c).stem if c else DEFAULTS for c in configs]
    if len(set(stems)) < len(stems):
        stems = [c or DEFAULTS for c in configs]
    names = []
    for stem, seed, gate in itertools.product(stems, seeds, gates):
        parts = []
        if len(configs) > 1 or (len(seeds) == 1 and len(gates) == 1):
            parts.append(stem)
        if len(seeds) > 1:
            parts.append(f"seed={seed}")
        if len(gates) > 1:
            parts.append(gate or "gates=default")
        names.append(" ".join(parts))
    return names


@click.command("compare")
@click.option("-f", "--filename", "files", multiple=True, help="File or directory; repeatable.")
@click.option(
    "--config",
    "configs",
    multiple=True,
    help=f"A KubeSchedulerConfiguration file, or {DEFAULTS!r}; repeatable (one variant each).",
)
@click.option("--seed", "seeds", multiple=True, type=int, help="Repeatable (default: 0).")
@click.option(
    "--feature-gates",
    "gates",
    multiple=True,
    help="As simulate's; repeatable (one variant each).",
)
@click.option("--until", default=None, type=DURATION, help="Stop each run's clock here.")
@click.option(
    "--trace",
    "trace_spec",
    default=None,
    metavar="FORMAT:PATH[,PATH...]",
    help="Replay a cluster trace in every variant (see docs/traces.md).",
)
@click.option(
    "-o",
    "--output",
    default="table",
    show_default=True,
    type=click.Choice(["table", "json", "yaml"]),
)
@click.option(
    "--report",
    "report_file",
    default=None,
    metavar="FILE.html",
    help="Also write the comparison as a self-contained HTML page.",
)
@click.option("--max-input-bytes", default="512Mi", show_default=True, type=SIZE)
@click.option(
    "--max-objects", default=DEFAULT_MAX_OBJECTS, show_default=True, type=click.IntRange(min=1)
)
@trace_commands.trace_options(seed=False)
def compare(
    files: tuple[str, ...],
    configs: tuple[str, ...],
    seeds: tuple[int, ...],
    gates: tuple[str, ...],
    trace_spec: str | None,
    output: str,
    report_file: str | None,
    **flags: Any,  # the rest of the RunSpec's flags: runspec_from_options reads them
) -> None:
    """Run one scenario under two or more configurations (or seeds, or feature
    gates) and show them side by side."""
    from kubesched.cli import render
    from kubesched.cli.input import echo_input_notes
    from kubesched.report import compare as report
    from kubesched.sim import runspec

    if not files and trace_spec is None:
        raise InputError("-f: required (or --trace)")
    if "-" in files:
        raise InputError("-f -: compare reads its input once per variant; give files")
    config_list = [None if c == DEFAULTS else c for c in configs] or [None]
    seed_list, gate_list = list(seeds) or [0], list(gates) or [""]
    combos = list(itertools.product(config_list, seed_list, gate_list))
    if len(combos) < 2:
        raise InputError(
            "nothing to compare: give two or more --config, --seed or --feature-gates values"
        )
    names = variant_names(config_list, seed_list, gate_list)
    variants, docs = [], []
    for i, (name, (config, seed, gate)) in enumerate(zip(names, combos, strict=True)):
        spec = runspec_from_options(config_file=config, seed=seed, feature_gates=gate)
        loaded = runspec.load(spec)
        if i == 0:
            echo_input_notes(loaded)
        docs.append(runspec.document(runspec.execute(spec, loaded), loaded, nodes=True))
        variants.append(report.Variant(name, config, seed, gate))
    doc = report.comparison(variants, docs)
    if report_file is not None:
        try:
            with open(report_file, "w", encoding="utf-8") as f:
                f.write(report.render(doc, docs))
        except OSError as err:
            raise InputError(str(err.strerror), field=f"--report {report_file}") from None
    out = click.get_text_stream("stdout")
    if output == "json":
        out.write(render.to_json(doc))
    elif output == "yaml":
        out.write(render.to_yaml(doc))
    else:
        out.write(report.text(doc))
