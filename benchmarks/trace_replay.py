"""Replay a cluster trace end to end: import, build the scenario, run, summarize.

Default: the full openb trace (1,523 nodes, 8,152 pods) from ``traces/openb``
(or ``$KUBESCHED_TRACES/openb``; see the README for where to download it), as ``kubesched simulate
--trace openb:...`` would replay it (objects straight into the scenario, no
YAML), with the horizon following the trace (``traces.replay.horizon``).

Usage::

    .venv/bin/python benchmarks/trace_replay.py                     # full default trace
    .venv/bin/python benchmarks/trace_replay.py --via-yaml          # write + load manifests
    .venv/bin/python benchmarks/trace_replay.py --no-deletions      # pods never end: fills up
    .venv/bin/python benchmarks/trace_replay.py --sample 0.25 --profile
    .venv/bin/python benchmarks/trace_replay.py --json summary.json

Prints the wall time of each phase, the process CPU time (user + system; less
sensitive than wall time to other load on the machine), the peak RSS
(``resource.getrusage``) and the replay summary (per-tier counts, scheduling
delays, allocation over time).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import pstats
import resource
import sys
import tempfile
import time
from fractions import Fraction
from pathlib import Path

from kubesched.api.duration import HOUR
from kubesched.sim.scenario import Scenario, load_scenario, run_scenario
from kubesched.sim.traces import ImportOptions, TraceObjects, load_trace
from kubesched.sim.traces.common import parse_fraction, parse_sample
from kubesched.sim.traces.manifests import write_directory
from kubesched.sim.traces.replay import build_scenario, horizon
from kubesched.sim.traces.summary import render_summary, summarize_run


def _default_trace() -> Path:
    env = os.environ.get("KUBESCHED_TRACES")
    repo = Path(__file__).resolve().parents[1]
    if env:
        return Path(env) / "openb"
    local = repo / "traces" / "openb"
    return local if local.is_dir() else repo.parent / "shared" / "traces" / "openb"


DEFAULT_TRACE = _default_trace()


def _scenario(trace: TraceObjects, via_yaml: bool) -> Scenario:
    if not via_yaml:
        return build_scenario(trace)
    with tempfile.TemporaryDirectory() as tmp:
        write_directory(trace, tmp)
        return load_scenario([tmp])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="*", default=[str(DEFAULT_TRACE)], help="trace files or dir")
    ap.add_argument("--format", default="openb")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sample", type=parse_sample, default=None)
    ap.add_argument("--time-scale", type=lambda t: parse_fraction(t, "--time-scale"))
    ap.add_argument("--node-fraction", type=lambda t: parse_fraction(t, "--node-fraction"))
    ap.add_argument("--gpu-share", default="round-up")
    ap.add_argument("--no-deletions", action="store_true")
    ap.add_argument("--via-yaml", action="store_true", help="write manifests, load_scenario them")
    ap.add_argument("--profile", action="store_true", help="cProfile the run, top functions")
    ap.add_argument("--interval-hours", type=float, default=1.0)
    ap.add_argument("--json", default=None, help="write the summary document here")
    args = ap.parse_args(argv)

    options = ImportOptions(
        seed=args.seed,
        sample=args.sample,
        time_scale=args.time_scale or Fraction(1),
        node_fraction=args.node_fraction or Fraction(1),
        gpu_share=args.gpu_share,
        no_deletions=args.no_deletions,
    )
    t0 = time.perf_counter()
    trace = load_trace(args.format, args.paths, options)
    t1 = time.perf_counter()
    scenario = _scenario(trace, args.via_yaml)
    t2 = time.perf_counter()
    prof = cProfile.Profile() if args.profile else None
    if prof is not None:
        prof.enable()
    run = run_scenario(scenario, seed=args.seed, horizon=horizon(trace))
    if prof is not None:
        prof.disable()
    t3 = time.perf_counter()
    summary = summarize_run(run, interval=round(args.interval_hours * HOUR))
    t4 = time.perf_counter()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    rss_mib = usage.ru_maxrss / 1024
    cpu_s = usage.ru_utime + usage.ru_stime

    print(trace.stats.line())
    print(
        f"import {t1 - t0:.2f}s  scenario {t2 - t1:.2f}s ({'yaml' if args.via_yaml else 'direct'})"
        f"  run {t3 - t2:.2f}s  summary {t4 - t3:.2f}s  total {t4 - t0:.2f}s"
    )
    stats = run.simulation.stats
    print(
        f"cycles {stats.cycles}  stopped by {stats.stopped_by} at "
        f"{stats.end_time / 1e9:.0f}s simulated  pods/s {stats.cycles / (t3 - t2):.0f}"
        f"  peak RSS {rss_mib:.0f} MiB  process CPU {cpu_s:.1f}s"
    )
    print(render_summary(summary), end="")
    if args.json:
        Path(args.json).write_text(json.dumps(summary, indent=1) + "\n")
    if prof is not None:
        pstats.Stats(prof, stream=sys.stdout).sort_stats("tottime").print_stats(25)
        pstats.Stats(prof, stream=sys.stdout).sort_stats("cumulative").print_stats(30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
