"""Reading a scenario's input for the commands that run one (``simulate``,
``explain``): manifests and/or a live cluster's state, with the notes printed
about what was ignored."""

from __future__ import annotations

import sys
from typing import Final

import click

from kubesched.api.errors import InputError
from kubesched.cli.input_warnings import warning_lines
from kubesched.sim.runspec import Loaded, RunSpec, load

OUT_OF_MEMORY: Final = "out of memory reading the input (lower --max-input-bytes or --max-objects)"
"""Within the caps, yet more than this process may use (a ulimit, a small machine)."""


def load_input(
    spec: RunSpec, from_cluster: bool, kubeconfig: str | None, context: str | None
) -> Loaded:
    """``runspec.load`` of ``spec`` (``-`` in its files is stdin), after the live
    cluster's objects when ``from_cluster`` (a cluster that cannot be read ends the
    command with exit 4). A trace's import summary, then ``echo_input_notes``, go to
    stderr. Bad input raises ``InputError``, as does running out of memory
    (``OUT_OF_MEMORY``)."""
    try:
        first = []
        if from_cluster:
            from kubesched.cli import live_commands  # live mode only when asked for

            cluster = live_commands.read_cluster(kubeconfig, context)
            first = live_commands.snapshot_documents(cluster)
        loaded = load(spec, stdin=sys.stdin, first=first)
        if loaded.trace is not None:
            click.echo(loaded.trace.stats.line(), err=True)
    except MemoryError:
        raise InputError(OUT_OF_MEMORY) from None
    echo_input_notes(loaded)
    return loaded


def echo_input_notes(loaded: Loaded) -> None:
    """What was ignored and the input's warnings, on stderr."""
    scenario = loaded.scenario
    if scenario.ignored:
        items = sorted(scenario.ignored.items(), key=lambda kv: (-kv[1], kv[0]))
        parts = ", ".join(f"{n} {k}" for k, n in items)
        total = sum(scenario.ignored.values())
        click.echo(f"ignored {total} objects: {parts}", err=True)
    for line in warning_lines(scenario):
        click.echo(f"warning: {line}", err=True)
