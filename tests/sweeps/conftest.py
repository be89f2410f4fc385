"""Shared fixtures of the sweep tests: one real two-process Dask LocalCluster for
the package (starting one takes seconds), and a tiny openb-format trace."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesched.sweeps import engine
from tests.sim.traces.data import node_row, pod_row, write_trace

distributed = pytest.importorskip("distributed")  # the `sweep` extra (in `dev`)

CONFIG = """\
apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
podInitialBackoffSeconds: 7
profiles:
- schedulerName: default-scheduler
  plugins:
    score:
      disabled:
      - name: NodeResourcesBalancedAllocation
"""


@pytest.fixture(scope="package")
def cluster() -> Iterator[distributed.LocalCluster]:
    """The embedded cluster ``kubesched sweep`` starts, with two workers."""
    with engine.local_cluster(2) as c:
        yield c


@pytest.fixture(scope="package")
def client(cluster: distributed.LocalCluster) -> Iterator[distributed.Client]:
    with distributed.Client(cluster) as c:
        yield c


@pytest.fixture(scope="session")
def trace(tmp_path_factory: pytest.TempPathFactory) -> str:
    """``openb:NODES,PODS``: 3 small nodes and 14 pods that do not all fit, arriving
    over time, some deleted, in two tiers: sampling and seeds change the outcome."""
    tmp = tmp_path_factory.mktemp("trace")
    nodes = [node_row(f"n{i}", cpu=4000, mem=8192) for i in range(3)]
    pods = [
        pod_row(
            f"p{i:02d}",
            cpu=1000 + 500 * (i % 4),
            mem=1024,
            qos="LS" if i % 3 == 0 else "BE",
            created=10 * i,
            deleted=10 * i + 300 if i % 5 == 0 else "",
        )
        for i in range(14)
    ]
    return "openb:" + ",".join(write_trace(tmp, nodes, pods))


@pytest.fixture(scope="session")
def config_file(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("config") / "config.yaml"
    path.write_text(CONFIG)
    return str(path)


def example(name: str) -> str:
    return str(Path(__file__).resolve().parents[2] / "examples" / name)
