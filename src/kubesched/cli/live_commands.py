"""Commands and options that read a live cluster: ``kubesched snapshot`` and
``simulate --from-cluster`` (``kubesched.live``).

A failure to read the cluster (no configuration, unreachable, 401/403) is one
line on stderr naming the request and the server's answer, and exit code 4
(``EXIT_CLUSTER``); nothing is written to stdout then.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any, Final, TypeVar

import click

from kubesched.api.errors import InputError
from kubesched.api.input_limits import DEFAULT_LIMITS, ReadBudget, read_file
from kubesched.api.load import Document, documents_from_text
from kubesched.api.types import DEFAULT_SCHEDULER_NAME
from kubesched.cli.params import cluster_options
from kubesched.framework.config import SchedulerConfig
from kubesched.live.client import ClusterError, connect
from kubesched.live.leader import LeaseConfig
from kubesched.live.options import LiveOptions, live_options
from kubesched.live.run import LiveRun, live_default_config
from kubesched.live.snapshot import Snapshot, take
from kubesched.scheduler.config import default_config, parse_config
from kubesched.scheduler.registry import in_tree_registry

F = TypeVar("F", bound=Callable[..., Any])

EXIT_CLUSTER: Final = 4


def read_cluster(kubeconfig: str | None, context: str | None) -> Snapshot:
    """The cluster's snapshot; a ``ClusterError`` ends the command (exit 4)."""
    try:
        return take(connect(kubeconfig, context))
    except ClusterError as err:
        click.echo(f"error: {err}", err=True)
        raise SystemExit(EXIT_CLUSTER) from None


def snapshot_documents(snap: Snapshot) -> list[Document]:
    """The snapshot's objects as ``-f`` input documents (source: the server)."""
    source = f"cluster {snap.server}"
    return [Document(source=source, index=i, raw=item) for i, item in enumerate(snap.items)]


@click.command()
@cluster_options
@click.option(
    "-o",
    "--output",
    default="yaml",
    show_default=True,
    type=click.Choice(["yaml", "json"]),
)
def snapshot(kubeconfig: str | None, context: str | None, output: str) -> None:
    """Read a live cluster into one List that `kubesched simulate -f` takes.

    Every kind the simulation models, in all namespaces: Namespaces,
    PriorityClasses, storage (StorageClasses, CSINodes, PVs, PVCs), Nodes, PDBs,
    workloads (Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs)
    and Pods, without managedFields. Needs list access to all of them.
    """
    from kubesched.cli.render import to_yaml

    snap = read_cluster(kubeconfig, context)
    out = click.get_text_stream("stdout")
    if output == "json":
        out.write(json.dumps(snap.as_list(), indent=2, ensure_ascii=False) + "\n")
    else:
        out.write(snap.header())
        out.write(to_yaml(snap.as_list()))
    if snap.missing:
        click.echo(f"warning: not served by this cluster: {', '.join(snap.missing)}", err=True)


class _LogFormatter(logging.Formatter):
    """One line per record: ``time=... level=... logger=... msg="..."`` (logfmt)."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
        msg = record.getMessage().replace('"', '\\"')
        return f'time={stamp}Z level={record.levelname.lower()} logger={record.name} msg="{msg}"'


def _address(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise InputError(f'--status-address "{text}": expected HOST:PORT')
    return host.strip("[]") or "0.0.0.0", int(port)


def _read_config(path: str | None, shadow: bool) -> tuple[SchedulerConfig, LiveOptions]:
    """The scheduler's configuration and live mode's options (``--config``; by
    default one profile, ``kubesched``, or ``default-scheduler`` for a shadow)."""
    if path is None:
        config = default_config(in_tree_registry().keys()) if shadow else live_default_config()
        return config, LiveOptions()
    docs = documents_from_text(read_file(path, ReadBudget(DEFAULT_LIMITS)), path)
    if len(docs) != 1:
        raise InputError("expected one KubeSchedulerConfiguration document", source=path)
    raw = docs[0].raw
    config = parse_config(raw, path, in_tree_registry().keys())
    return config, live_options(raw, path)


@click.command(name="run")
@cluster_options
@click.option("--config", "config_file", default=None, help="A KubeSchedulerConfiguration file.")
@click.option(
    "--allow-default-scheduler",
    is_flag=True,
    help="Allow a profile named default-scheduler (kubesched then takes the pods of the "
    "cluster's own scheduler: replace it, do not run both).",
)
@click.option(
    "--leader-elect/--no-leader-elect",
    default=None,
    help="Override leaderElection.leaderElect (default: on, as kube-scheduler).",
)
@click.option(
    "--shadow",
    is_flag=True,
    help="Write nothing: decide the pods of the profiles (default: default-scheduler) as "
    "kubesched would and print, as JSON lines, whether the cluster's scheduler agreed.",
)
@click.option("--seed", default=None, type=int, help="Seed tie-breaks (default: random).")
@click.option(
    "--status-address",
    default="0.0.0.0:10259",
    show_default=True,
    metavar="HOST:PORT",
    help='Serve /metrics, /healthz, /readyz, /livez here (plain HTTP; "" for none).',
)
@click.option(
    "--for",
    "duration",
    default=None,
    type=float,
    metavar="SECONDS",
    help="Stop after this many seconds (default: until SIGTERM).",
)
def run(
    kubeconfig: str | None,
    context: str | None,
    config_file: str | None,
    allow_default_scheduler: bool,
    leader_elect: bool | None,
    shadow: bool,
    seed: int | None,
    status_address: str,
    duration: float | None,
) -> None:
    """Schedule a live cluster's pods whose spec.schedulerName names one of the
    profiles (default profile: kubesched), as a second scheduler.

    Same scheduler core and plugins as `simulate`. Leader election on the Lease
    kube-system/kubesched (leaderElection in --config); SIGTERM or SIGINT stop it
    cleanly (the lease is released). Exit 4 when the cluster cannot be read, 1
    when the lease is lost.
    """
    handler = logging.StreamHandler()
    handler.setFormatter(_LogFormatter())
    logging.basicConfig(level=logging.INFO, handlers=[handler], force=True)
    config, options = _read_config(config_file, shadow)
    taken = [p.scheduler_name for p in config.profiles]
    if DEFAULT_SCHEDULER_NAME in taken and not (allow_default_scheduler or shadow):
        raise InputError(
            f'profile "{DEFAULT_SCHEDULER_NAME}": kubesched would take the pods of the '
            "cluster's own scheduler; name the profile otherwise (default: kubesched) "
            "or pass --allow-default-scheduler",
            source=config_file,
            field="profiles[].schedulerName",
        )
    # A shadow writes nothing: it needs no lease unless asked for one.
    lease = options.leader if leader_elect or (leader_elect is None and not shadow) else None
    if leader_elect and lease is None:
        lease = LeaseConfig()
    try:
        client = connect(kubeconfig, context, options.qps, options.burst)
    except ClusterError as err:
        click.echo(f"error: {err}", err=True)
        raise SystemExit(EXIT_CLUSTER) from None
    status = _address(status_address) if status_address else None
    out = click.get_text_stream("stdout") if shadow else None
    outcome = LiveRun(client, config, lease, seed, status, out).run(duration)
    if outcome:
        click.echo(f"error: {outcome}", err=True)
        raise SystemExit(EXIT_CLUSTER if outcome.startswith("cache") else 1)
