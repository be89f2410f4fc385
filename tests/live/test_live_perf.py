"""benchmarks/live_perf.py runs end to end on a tiny cluster (a smoke test: the
benchmark itself is not run by CI, and nothing here is timed)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("kubernetes")

ROOT = Path(__file__).resolve().parents[2]


def test_live_perf_binds_every_pod_and_prints_its_table() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "live_perf.py"),
            "--nodes",
            "50",
            "--pods",
            "20",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    ).stdout
    rows = [line for line in out.splitlines() if line.startswith("| ") and "/" in line]
    assert out.startswith("Machine: ")
    assert [r.split(" | ")[0:2] for r in rows[1:]] == [
        ["| 5000 / 5000", "50 / 20"],
        ["| 50 / 100", "50 / 20"],
    ]
    assert all(float(r.split(" | ")[2]) > 0 for r in rows[1:])


def test_live_perf_over_tls() -> None:
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make certificates")
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    script = str(ROOT / "benchmarks" / "live_perf.py")
    out = subprocess.run(
        [sys.executable, script, "--nodes", "20", "--pods", "10", "--qps", "500", "--tls"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    ).stdout
    rows = [line for line in out.splitlines() if line.startswith("| 500 / 100 ")]
    assert len(rows) == 1 and float(rows[0].split(" | ")[2]) > 0
