"""``kubesched import`` and the pieces ``kubesched simulate --trace`` needs.

- :data:`import_` — the click command ``import FORMAT PATH... (--stdout | -o DIR)``
  (registered by ``cli.main`` as ``kubesched import``): reads a trace, writes
  ordinary manifests, prints one summary line on stderr.
- :func:`trace_options` — a decorator adding the import options (``--sample``,
  ``--time-scale``, ``--gpu-share`` ...) to a command; :func:`import_options`
  turns the parsed values into :class:`~kubesched.sim.traces.ImportOptions`.
- :func:`echo_replay_summary` prints the replay summary (``kubesched.sim.runspec``
  loads ``--trace FORMAT:PATH,...``).

Bad values exit with status 2 (click's usage errors, or InputError handled by
the ``kubesched`` group).
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction
from typing import TYPE_CHECKING, Any, TypeVar

import click

from kubesched.api.input_limits import DEFAULT_MAX_INPUT_BYTES
from kubesched.cli.params import SIZE, Parsed
from kubesched.sim.traces import (
    GPU_SHARE_MODES,
    GPU_SHARE_ROUND_UP,
    ImportOptions,
    format_names,
    get_format,
)
from kubesched.sim.traces.common import parse_fraction, parse_priorities, parse_sample

if TYPE_CHECKING:  # imported lazily at run time: `kubesched --help` stays fast
    from kubesched.sim.scenario import Run

F = TypeVar("F", bound=Callable[..., Any])


def trace_options(*, seed: bool) -> Callable[[F], F]:
    """Add the trace import options to a click command. ``seed=False`` for a command
    that already has ``--seed`` (``simulate``: one seed seeds every choice)."""
    options = [
        click.option(
            "--limit",
            type=click.IntRange(min=1),
            default=None,
            help="Keep only the first N pods of the trace.",
        ),
        click.option(
            "--sample",
            type=Parsed("N|FRACTION", parse_sample),
            default=None,
            help="Keep N pods, or a fraction (0.1, 10%) of them, chosen by --seed.",
        ),
        click.option(
            "--time-scale",
            type=Parsed("FACTOR", lambda t: parse_fraction(t, "--time-scale")),
            default="1",
            show_default=True,
            help="Multiply every trace time and duration (0.001: 1000x faster).",
        ),
        click.option(
            "--node-fraction",
            type=Parsed("FRACTION", lambda t: parse_fraction(t, "--node-fraction")),
            default="1",
            show_default=True,
            help="Keep this fraction of the nodes (<1) or add copies of random ones (>1).",
        ),
        click.option(
            "--drop-nodes",
            type=click.IntRange(min=0),
            default=0,
            show_default=True,
            help="Remove N more nodes chosen by --seed.",
        ),
        click.option(
            "--gpu-share",
            type=click.Choice(GPU_SHARE_MODES),
            default=GPU_SHARE_ROUND_UP,
            show_default=True,
            help="Pods asking for part of one GPU: whole GPU, skip them, or a "
            "per-node milli-GPU resource (see docs/traces.md).",
        ),
        click.option(
            "--priorities",
            type=Parsed("TIER=VALUE[:Never],...", parse_priorities),
            default="",
            help="PriorityClass value per trace tier, e.g. LS=10000,BE=0:Never.",
        ),
        click.option(
            "--max-pods",
            type=click.IntRange(min=1),
            default=110,
            show_default=True,
            help="The pods allocatable of every node.",
        ),
        click.option(
            "--no-deletions",
            is_flag=True,
            help="Ignore deletion times: pods run to the end and the cluster fills up.",
        ),
    ]
    if seed:
        options.insert(
            0,
            click.option(
                "--seed", default=0, show_default=True, type=int, help="Seeds every choice."
            ),
        )

    def apply(f: F) -> F:
        for opt in reversed(options):
            f = opt(f)
        return f

    return apply


def import_options(
    seed: int, max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES, **values: Any
) -> ImportOptions:
    """The ImportOptions of the values :func:`trace_options` parsed (by their keyword
    names: ``limit``, ``sample``, ... ``no_deletions``) and of ``--max-input-bytes``."""
    return ImportOptions(
        max_input_bytes=max_input_bytes,
        seed=seed,
        limit=values["limit"],
        sample=values["sample"],
        time_scale=values["time_scale"] or Fraction(1),
        node_fraction=values["node_fraction"] or Fraction(1),
        drop_nodes=values["drop_nodes"],
        gpu_share=values["gpu_share"],
        priorities=values["priorities"] or {},
        max_pods=values["max_pods"],
        no_deletions=values["no_deletions"],
    )


@click.command("import")
@click.argument("format_name", metavar="FORMAT")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--stdout", "to_stdout", is_flag=True, help="Write all manifests to stdout.")
@click.option(
    "-o",
    "--output-dir",
    default=None,
    metavar="DIR",
    help="Write nodes.yaml, priorityclasses.yaml and pods.yaml into DIR.",
)
@click.option(
    "--max-input-bytes",
    default="512Mi",
    show_default=True,
    type=SIZE,
    help="Refuse trace files larger than this together (bytes, or a quantity: 1Gi).",
)
@trace_options(seed=True)
def import_(
    format_name: str,
    paths: tuple[str, ...],
    to_stdout: bool,
    output_dir: str | None,
    max_input_bytes: int,
    seed: int,
    **values: Any,
) -> None:
    """Turn a cluster trace into Kubernetes manifests for `kubesched simulate -f`.

    FORMAT is one of the known trace formats (openb: the Alibaba GPU trace, PATHs
    are its node and pod CSV files or their directory).
    """
    from kubesched.sim.traces.manifests import write_directory, write_yaml

    if to_stdout == (output_dir is not None):
        raise click.UsageError("give exactly one of --stdout and -o DIR")
    if format_name not in format_names():
        raise click.BadParameter(
            f'unknown trace format "{format_name}"; known: {", ".join(format_names())}',
            param_hint="FORMAT",
        )
    options = import_options(seed, max_input_bytes, **values)
    trace = get_format(format_name).load(list(paths), options)
    if to_stdout:
        write_yaml(trace, click.get_text_stream("stdout"))
    else:
        assert output_dir is not None
        for path in write_directory(trace, output_dir):
            click.echo(f"wrote {path}", err=True)
    click.echo(trace.stats.line(), err=True)


def echo_replay_summary(run: Run, *, err: bool = True) -> None:
    """The text replay summary of a finished run (stderr by default)."""
    from kubesched.sim.traces.summary import render_summary, summarize_run

    click.echo(render_summary(summarize_run(run)), err=err, nl=False)
