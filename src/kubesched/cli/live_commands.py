"""Commands and options that read a live cluster: ``kubesched snapshot`` and
``simulate --from-cluster`` (``kubesched.live``).

A failure to read the cluster (no configuration, unreachable, 401/403) is one
line on stderr naming the request and the server's answer, and exit code 4
(``EXIT_CLUSTER``); nothing is written to stdout then.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Final, TypeVar

import click

from kubesched.api.load import Document
from kubesched.live.client import ClusterError, connect
from kubesched.live.snapshot import Snapshot, take

F = TypeVar("F", bound=Callable[..., Any])

EXIT_CLUSTER: Final = 4


def cluster_options(fn: F) -> F:
    """``--kubeconfig`` and ``--context``, as kubectl's."""
    fn = click.option(
        "--context",
        default=None,
        help="The kubeconfig context to use (default: its current context).",
    )(fn)
    return click.option(
        "--kubeconfig",
        default=None,
        metavar="PATH",
        help="Kubeconfig file (default: $KUBECONFIG, ~/.kube/config, else in-cluster).",
    )(fn)


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
