"""Test data for trace importers: the shared openb trace (skipped when absent) and
tiny synthetic CSVs written on the fly."""

from __future__ import annotations

import csv
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from kubesched.sim.traces.openb import NODE_COLUMNS, POD_COLUMNS

REPO = Path(__file__).resolve().parents[3]


def traces_dir() -> Path:
    """Where the public traces are: ``$KUBESCHED_TRACES``, else ``traces/`` in the
    repository if present, else the development machines' shared copy beside it."""
    env = os.environ.get("KUBESCHED_TRACES")
    if env:
        return Path(env)
    local = REPO / "traces"
    return local if local.is_dir() else REPO.parent / "shared" / "traces"


OPENB_DIR = traces_dir() / "openb"
OPENB_NODES = OPENB_DIR / "openb_node_list_all_node.csv"
OPENB_PODS = OPENB_DIR / "openb_pod_list_default.csv"


def openb_paths() -> list[str]:
    """The openb trace's two files; skips the test when they are absent."""
    if not (OPENB_NODES.is_file() and OPENB_PODS.is_file()):
        pytest.skip(f"openb trace not found in {OPENB_DIR}")
    return [str(OPENB_NODES), str(OPENB_PODS)]


def csv_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as f:
        return list(csv.DictReader(f))


def node_row(
    sn: str, cpu: int = 32000, mem: int = 262144, gpu: int = 0, model: str = ""
) -> dict[str, Any]:
    return {"sn": sn, "cpu_milli": cpu, "memory_mib": mem, "gpu": gpu, "model": model}


def pod_row(
    name: str,
    *,
    cpu: int = 1000,
    mem: int = 1024,
    num_gpu: int = 0,
    gpu_milli: int | None = None,
    gpu_spec: str = "",
    qos: str = "LS",
    phase: str = "Running",
    created: int = 0,
    scheduled: int | str | None = None,
    deleted: int | str = "",
) -> dict[str, Any]:
    """A pod row; by default scheduled at creation (``scheduled=""``: never) and never
    deleted."""
    return {
        "name": name,
        "cpu_milli": cpu,
        "memory_mib": mem,
        "num_gpu": num_gpu,
        "gpu_milli": (1000 if num_gpu else 0) if gpu_milli is None else gpu_milli,
        "gpu_spec": gpu_spec,
        "qos": qos,
        "pod_phase": phase,
        "creation_time": created,
        "deletion_time": deleted,
        "scheduled_time": created if scheduled is None else scheduled,
    }


def write_csv(path: Path, columns: Sequence[str], rows: Sequence[dict[str, Any]]) -> str:
    with path.open("w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(columns))
        w.writeheader()
        for r in rows:
            w.writerow(r)
    return str(path)


def write_trace(
    tmp: Path, nodes: Sequence[dict[str, Any]], pods: Sequence[dict[str, Any]]
) -> list[str]:
    return [
        write_csv(tmp / "nodes.csv", NODE_COLUMNS, nodes),
        write_csv(tmp / "pods.csv", POD_COLUMNS, pods),
    ]
