"""Running a plan's RunSpecs on Dask (``distributed``).

Each RunSpec is one task: a worker runs :func:`run_one` (``result_document`` then
``run_metrics``, exactly what ``simulate -o json --show nodes`` computes), so a
sweep's row is the serial run's figures. Workers read the RunSpec's files
themselves: the paths must be readable on every worker (on a LocalCluster they
are; on a remote cluster use a shared file system and absolute paths), and every
worker needs the same kubesched installed.

A run that raises (bad input of one combination, any exception) becomes an
:class:`Outcome` with its error; so does a task Dask could not finish (a worker
that died). Nothing but an unreachable scheduler ends a sweep.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kubesched.report.metrics import run_metrics
from kubesched.sim.runspec import RunSpec, result_document

if TYPE_CHECKING:
    from distributed import Client


@dataclass(frozen=True)
class Outcome:
    """One run's figures (``run_metrics``), or its error (``Type: message``)."""

    metrics: dict[str, float] = field(default_factory=dict)
    error: str | None = None


def run_one(spec: RunSpec) -> Outcome:
    """Run ``spec`` as ``simulate`` does; any exception is the outcome's error."""
    try:
        return Outcome(run_metrics(result_document(spec, nodes=True)))
    except Exception as err:  # a sweep records a failed run, it does not stop
        return Outcome(error=f"{type(err).__name__}: {err}")


def machine_workers() -> int:
    """Worker processes for the embedded cluster: the CPUs this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def local_cluster(workers: int | None = None) -> Any:  # a distributed.LocalCluster
    """An embedded LocalCluster of ``workers`` single-threaded processes (default
    :func:`machine_workers`); it opens no dashboard, its HTTP endpoint takes a free
    local port, it logs nothing (a run's error is in its row), and its workers do
    not sample their tasks' stacks (Dask's profiler: about 10 % of a run's CPU)."""
    import dask
    from distributed import LocalCluster

    with dask.config.set({"distributed.worker.profile.enabled": False}):
        return LocalCluster(
            n_workers=workers or machine_workers(),
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            scheduler_kwargs={"dashboard": False, "dashboard_address": "127.0.0.1:0"},
            silence_logs=logging.CRITICAL,
        )


@contextlib.contextmanager
def connect(address: str | None = None, workers: int | None = None) -> Iterator[Client]:
    """A Client of the cluster at ``address``, else of a :func:`local_cluster` of
    ``workers``; both closed on exit."""
    from distributed import Client

    if address is not None:
        with Client(address) as client:
            yield client
        return
    with local_cluster(workers) as cluster, Client(cluster) as client:
        yield client


def run_all(
    specs: Sequence[RunSpec],
    client: Client,
    progress: Callable[[], None] | None = None,
) -> list[Outcome]:
    """The outcomes of ``specs`` in their order, run as tasks on ``client``;
    ``progress()`` after each finished run (in completion order)."""
    from distributed import as_completed

    futures = client.map(run_one, list(specs), pure=False)
    where = {f.key: i for i, f in enumerate(futures)}
    out: list[Outcome | None] = [None] * len(futures)
    for future in as_completed(futures):
        i = where[future.key]
        if future.status == "finished":
            out[i] = future.result()
        else:
            err = future.exception()
            out[i] = Outcome(error=f"{type(err).__name__}: {err}")
        future.release()
        if progress is not None:
            progress()
    assert all(o is not None for o in out)
    return [o for o in out if o is not None]
