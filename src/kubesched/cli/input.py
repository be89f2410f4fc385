"""Reading a scenario's input for the commands that run one (``simulate``,
``explain``): manifests and/or a live cluster's state, with the notes printed
about what was ignored."""

from __future__ import annotations

import sys
from typing import Final

import click

from kubesched.api.input_limits import InputLimits
from kubesched.cli.input_warnings import warning_lines
from kubesched.sim.scenario import Scenario, load_scenario

OUT_OF_MEMORY: Final = "out of memory reading the input (lower --max-input-bytes or --max-objects)"
"""Within the caps, yet more than this process may use (a ulimit, a small machine)."""


def load_manifests(
    files: tuple[str, ...],
    config_file: str | None,
    limits: InputLimits,
    from_cluster: bool,
    kubeconfig: str | None,
    context: str | None,
) -> Scenario:
    """The scenario of ``-f`` files (``-`` is stdin), after the live cluster's
    objects when ``from_cluster`` (a cluster that cannot be read ends the
    command with exit 4). Bad input raises ``InputError``."""
    first = []
    if from_cluster:
        from kubesched.cli import live_commands  # live mode only when asked for

        first = live_commands.snapshot_documents(live_commands.read_cluster(kubeconfig, context))
    return load_scenario(
        list(files), config_file=config_file, stdin=sys.stdin, limits=limits, first=first
    )


def echo_input_notes(scenario: Scenario) -> None:
    """What was ignored and the input's warnings, on stderr."""
    if scenario.ignored:
        items = sorted(scenario.ignored.items(), key=lambda kv: (-kv[1], kv[0]))
        parts = ", ".join(f"{n} {k}" for k, n in items)
        total = sum(scenario.ignored.values())
        click.echo(f"ignored {total} objects: {parts}", err=True)
    for line in warning_lines(scenario):
        click.echo(f"warning: {line}", err=True)
