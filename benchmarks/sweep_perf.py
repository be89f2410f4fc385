"""A sweep serial versus on Dask: 64 sampled openb replays (seeds 0..63).

Runs the same plan twice, as ``kubesched sweep --trace openb:DIR --sample N
--seeds 0-63`` plans it: first serially in this process (``result_document`` +
``run_metrics``, what one worker does per run), then on an embedded
``LocalCluster`` of single-threaded worker processes (default: one per CPU).
Checks that both give the same rows, then prints:

- wall time serial, and on the cluster both with its start and shutdown (what a user waits)
  and for the runs alone (the cluster up, kubesched imported on the workers);
- speedup (serial / cluster) and speedup per core (speedup / workers: 1.0 is
  perfect scaling);
- CPU time of the runs serially and on all workers together (their ratio is
  the cost of distributing, and the figure least disturbed by other load);
- peak RSS of the serial process and of each worker (workers are asked for their
  own ``getrusage`` peak and current RSS after the runs).

Usage::

    .venv/bin/python benchmarks/sweep_perf.py TRACE_DIR [--sample 200] [--runs 64]
        [--workers N] [--json out.json]

TRACE_DIR holds the openb trace's two CSV files (see docs/traces.md for where to
get them). Needs the ``sweep`` extra.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import time
from typing import Any

from kubesched.report.metrics import run_metrics
from kubesched.sim.runspec import RunSpec, result_document
from kubesched.sim.traces import ImportOptions
from kubesched.sim.traces.common import parse_sample
from kubesched.sweeps import engine
from kubesched.sweeps.plan import plan

MIB = 1024 * 1024


def worker_memory() -> dict[str, float]:
    """This process's peak and current RSS (MiB) and CPU time so far (s); run on
    each worker."""
    import psutil

    usage = resource.getrusage(resource.RUSAGE_SELF)
    return {
        "peak_rss_mib": usage.ru_maxrss / 1024,
        "rss_mib": psutil.Process().memory_info().rss / MIB,
        "cpu_s": usage.ru_utime + usage.ru_stime,
    }


def warm() -> int:
    """Import what a run needs, so the runs alone are timed."""
    import importlib

    for name in ("openb", "replay", "summary"):
        importlib.import_module(f"kubesched.sim.traces.{name}")
    return os.getpid()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("trace_dir", help="directory of the openb trace's CSV files")
    parser.add_argument("--sample", default="200", help="pods per run (N or a fraction)")
    parser.add_argument("--runs", type=int, default=64, help="seeds 0..RUNS-1")
    parser.add_argument("--workers", type=int, default=engine.machine_workers())
    parser.add_argument("--json", default=None, help="also write the figures here")
    args = parser.parse_args()

    base = RunSpec(
        trace=f"openb:{args.trace_dir}",
        trace_options=ImportOptions(sample=parse_sample(args.sample)),
    )
    specs = [c.spec for c in plan(base, seeds=range(args.runs))]

    started, cpu = time.perf_counter(), time.process_time()
    serial = [run_metrics(result_document(s, nodes=True)) for s in specs]
    serial_wall, serial_cpu = time.perf_counter() - started, time.process_time() - cpu
    serial_peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    started = time.perf_counter()
    with engine.connect(None, args.workers) as client:
        client.run(warm)
        before = client.run(worker_memory)
        up = time.perf_counter()
        outcomes = engine.run_all(specs, client)
        runs_wall = time.perf_counter() - up
        memory = client.run(worker_memory)
    cluster_wall = time.perf_counter() - started
    assert all(o.error is None for o in outcomes), [o.error for o in outcomes if o.error]
    assert [o.metrics for o in outcomes] == serial, "the cluster's rows differ from serial"

    workers = len(memory)
    workers_cpu = sum(m["cpu_s"] - before[w]["cpu_s"] for w, m in memory.items())
    figures: dict[str, Any] = {
        "runs": args.runs,
        "sample": args.sample,
        "workers": workers,
        "cpus": os.cpu_count(),
        "serial_wall_s": round(serial_wall, 2),
        "serial_cpu_s": round(serial_cpu, 2),
        "serial_peak_rss_mib": round(serial_peak, 1),
        "cluster_wall_s": round(cluster_wall, 2),
        "cluster_overhead_s": round(cluster_wall - runs_wall, 2),
        "cluster_runs_wall_s": round(runs_wall, 2),
        "workers_cpu_s": round(workers_cpu, 2),
        "cpu_ratio_workers_to_serial": round(workers_cpu / serial_cpu, 2),
        "speedup": round(serial_wall / cluster_wall, 2),
        "speedup_runs_only": round(serial_wall / runs_wall, 2),
        "speedup_per_core": round(serial_wall / cluster_wall / workers, 2),
        "speedup_per_core_runs_only": round(serial_wall / runs_wall / workers, 2),
        "worker_peak_rss_mib": sorted(round(m["peak_rss_mib"], 1) for m in memory.values()),
        "worker_rss_mib": sorted(round(m["rss_mib"], 1) for m in memory.values()),
        "pods_scheduled_mean": sum(m["scheduled"] for m in serial) / len(serial),
    }
    for k, v in figures.items():
        print(f"{k:28} {v}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(figures, f, indent=1)


if __name__ == "__main__":
    main()
