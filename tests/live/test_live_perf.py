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


def live_perf(*args: str) -> str:
    """benchmarks/live_perf.py's standard output (it must exit 0)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    script = str(ROOT / "benchmarks" / "live_perf.py")
    done = subprocess.run(
        [sys.executable, script, *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=True,
    )
    return done.stdout


def test_live_perf_binds_every_pod_and_prints_its_table() -> None:
    out = live_perf("--nodes", "50", "--pods", "20")
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
    out = live_perf("--nodes", "20", "--pods", "10", "--qps", "500", "--tls")
    rows = [line for line in out.splitlines() if line.startswith("| 500 / 100 ")]
    assert len(rows) == 1 and float(rows[0].split(" | ")[2]) > 0
