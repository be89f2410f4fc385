"""Live-mode throughput: ``kubesched run`` against the API-server double on loopback.

    python benchmarks/live_perf.py                       # 5,000 nodes, 2,000 pods, both rows
    python benchmarks/live_perf.py --qps 50 --burst 100  # one row: these limits
    python benchmarks/live_perf.py --nodes 50 --pods 20  # a smoke run (a few seconds)

Each run starts the double in this process (``RealClock``, fake kubelet on),
creates ``--nodes`` nodes directly (``api.create``, no HTTP), starts ``kubesched
run --config CONFIG --no-leader-elect --status-address 127.0.0.1:0`` as a
subprocess (``clientConnection.qps`` / ``burst`` in CONFIG) and waits until it
logs that it schedules (its informers have synced) and has bound one warm-up
pod (so it has taken in the nodes). Then it creates ``--pods``
pending pods (``schedulerName: kubesched``, 100m CPU each) as fast as it can and
waits until the double's store (a store listener, not HTTP) has seen every one
bound. Throughput is pods bound per second from the first creation to the last
binding.

Without ``--qps``/``--burst`` two rows are run: the limits raised (qps 5000,
burst 5000, scheduler_perf's client settings) and kube-scheduler's defaults
(qps 50, burst 100). ``--repeat N`` runs each row N times (interleaved) and
reports the best, with the spread.

CPU: the double (HTTP server, watch fan-out, pod creation) runs in this process
and kubesched in its own; both share the machine's cores, so the table gives
each side's CPU seconds during the measured phase (the double's figure includes
creating the pods). Peak RSS is the scheduler process's ``VmHWM``.

``--against DIR`` runs every row a second time with the kubesched of another
checkout (``DIR/src``; the double stays this checkout's), interleaved with this
one's, and adds the ratio of the two (this / that): wall-clock figures swing
with the machine's load, their ratio much less.

``--tls`` serves HTTPS (a CA and a server certificate made with ``openssl``;
the kubeconfig names the CA and ``tls-server-name``), as a real cluster does.

``--profile FILE`` runs kubesched under cProfile (main thread: the scheduling
loop, its API writes and the conversion of watch events; the informer threads
that read and decode the watch streams are not in it) and writes the stats
there (``python -m pstats FILE``).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT = 90.0
"""Seconds ``kubesched run`` may take to sync its informers (5,000 nodes take a few)."""
if str(ROOT) not in sys.path:  # ``python benchmarks/live_perf.py`` from a checkout
    sys.path.insert(0, str(ROOT))

from benchmarks.standard import calibration, machine  # noqa: E402
from kubesched.live.apiserver_double import ApiServerDouble, RealClock  # noqa: E402
from kubesched.live.apiserver_double.store import StoreEvent  # noqa: E402
from kubesched.live.apiserver_double.tls import Certificates, make_certificates  # noqa: E402

RAISED = (5000.0, 5000)
DEFAULTS = (50.0, 100)
TICKS = os.sysconf("SC_CLK_TCK")


def node(name: str) -> dict[str, Any]:
    amounts = {"cpu": "32", "memory": "128Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": amounts, "capacity": amounts},
    }


def pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedulerName": "kubesched",
            "containers": [
                {"name": "c", "image": "pause", "resources": {"requests": {"cpu": "100m"}}}
            ],
        },
    }


class Bindings:
    """A store listener: counts pods that got a node, notes when the last did."""

    def __init__(self, want: int) -> None:
        self.want = want
        self.bound = 0
        self.last = 0.0
        self.done = threading.Event()

    def __call__(self, event: StoreEvent) -> None:
        if event.store != "pods" or event.type != "MODIFIED":
            return
        if (event.prev or {}).get("spec", {}).get("nodeName"):
            return
        if event.obj.get("spec", {}).get("nodeName"):
            self.bound += 1
            self.last = time.perf_counter()
            if self.bound >= self.want:
                self.done.set()


def cpu_seconds(pid: int) -> float:
    """utime + stime of a process (all its threads)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


@contextmanager
def scheduler(
    api: ApiServerDouble,
    qps: float,
    burst: int,
    workdir: Path,
    profile: str | None,
    src: Path = ROOT / "src",
    tls: Certificates | None = None,
) -> Iterator[tuple[subprocess.Popen[str], list[str]]]:
    """``kubesched run`` against ``api``, ready (informers synced) when yielded;
    its stderr lines collect in the list."""
    kubeconfig = api.write_kubeconfig(
        workdir / "kubeconfig", **(tls.kubeconfig_cluster() if tls else {})
    )
    config = workdir / "config.json"
    config.write_text(
        json.dumps(
            {
                "apiVersion": "kubescheduler.config.k8s.io/v1",
                "kind": "KubeSchedulerConfiguration",
                "clientConnection": {"qps": qps, "burst": burst},
                "leaderElection": {"leaderElect": False},
                "profiles": [{"schedulerName": "kubesched"}],
            }
        )
    )
    env = {**os.environ, "PYTHONPATH": str(src)}
    prefix = [sys.executable, *(["-m", "cProfile", "-o", profile] if profile else [])]
    cmd = [
        *prefix,
        "-m",
        "kubesched.cli.main",
        "run",
        "--kubeconfig",
        str(kubeconfig),
        "--config",
        str(config),
        "--no-leader-elect",
        "--seed",
        "0",
        "--status-address",
        "127.0.0.1:0",
    ]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
    )
    lines: list[str] = []
    ready = threading.Event()

    def drain() -> None:
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line.rstrip("\n"))
            if "scheduling as" in line:
                ready.set()
        ready.set()

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        # Its informers list the nodes at once: a start that takes longer than
        # this is a failure to connect (the informers retry it for ever, as
        # client-go's do), reported with kubesched's last log lines.
        ready.wait(START_TIMEOUT)
        if proc.poll() is not None or not any("scheduling as" in x for x in lines):
            raise SystemExit(
                f"kubesched run did not start in {START_TIMEOUT:.0f} s:\n" + "\n".join(lines[-20:])
            )
        yield proc, lines
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        reader.join(5)


@dataclass
class Result:
    pods_per_s: float
    seconds: float
    create_seconds: float
    sched_cpu: float
    double_cpu: float
    rss_mib: float
    warnings: int


def run_one(
    nodes: int,
    pods: int,
    qps: float,
    burst: int,
    profile: str | None,
    src: Path = ROOT / "src",
    tls: bool = False,
) -> Result:
    with tempfile.TemporaryDirectory() as tmp:
        certs = make_certificates(Path(tmp)) if tls else None
        context = certs.server_context() if certs else None
        api = ApiServerDouble(clock=RealClock(), kubelet=True, tls=context).start()
        try:
            return _measure(api, nodes, pods, qps, burst, profile, src, certs)
        finally:
            api.stop()


def _measure(
    api: ApiServerDouble,
    nodes: int,
    pods: int,
    qps: float,
    burst: int,
    profile: str | None,
    src: Path,
    certs: Certificates | None,
) -> Result:
    for i in range(nodes):
        api.create(node(f"node-{i:05d}"))
    with (
        tempfile.TemporaryDirectory() as tmp,
        scheduler(api, qps, burst, Path(tmp), profile, src, certs) as (proc, lines),
    ):
        # One pod first: bound, it shows the scheduler has taken in the nodes too.
        warm = Bindings(1)
        api.store.listeners.append(warm)
        api.create(pod("warm-up"))
        if not warm.done.wait(300):
            raise SystemExit("the warm-up pod was not bound:\n" + "\n".join(lines[-20:]))
        bindings = Bindings(pods)
        api.store.listeners.append(bindings)
        logged = len(lines)
        sched0, double0 = cpu_seconds(proc.pid), time.process_time()
        t0 = time.perf_counter()
        for i in range(pods):
            api.create(pod(f"pod-{i:05d}"))
        created = time.perf_counter() - t0
        deadline = max(120.0, 10.0 * pods / max(min(qps, 1000.0), 1.0))
        if not bindings.done.wait(deadline):
            raise SystemExit(
                f"only {bindings.bound} of {pods} pods bound in {deadline:.0f} s:\n"
                + "\n".join(lines[-20:])
            )
        elapsed = bindings.last - t0
        sched_cpu = cpu_seconds(proc.pid) - sched0
        double_cpu = time.process_time() - double0
        rss = peak_rss_mib(proc.pid)
        warned = [x for x in lines[logged:] if "level=warning" in x or "level=error" in x]
        warnings = len(warned)
        for line in dict.fromkeys(w.split(" msg=")[-1][:160] for w in warned[:200]):
            print(f"  kubesched logged: {line}", file=sys.stderr)
    return Result(pods / elapsed, elapsed, created, sched_cpu, double_cpu, rss, warnings)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--nodes", type=int, default=5000)
    ap.add_argument("--pods", type=int, default=2000)
    ap.add_argument("--qps", type=float, default=None, help="clientConnection.qps (one row)")
    ap.add_argument("--burst", type=int, default=None, help="clientConnection.burst (one row)")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument(
        "--against", default=None, metavar="DIR", help="also run DIR's kubesched, interleaved"
    )
    ap.add_argument(
        "--profile", default=None, metavar="FILE", help="cProfile kubesched (main thread)"
    )
    ap.add_argument(
        "--tls", action="store_true", help="serve HTTPS (a CA made with openssl in the kubeconfig)"
    )
    args = ap.parse_args()
    if args.qps is None and args.burst is None:
        configs = [RAISED, DEFAULTS]
    else:
        configs = [(args.qps if args.qps is not None else DEFAULTS[0], args.burst or DEFAULTS[1])]
    speed = calibration()
    trees = [("", ROOT / "src")]
    if args.against:
        trees.append((Path(args.against).resolve().name, Path(args.against).resolve() / "src"))
    runs: dict[tuple[int, int], list[Result]] = {}
    for _ in range(max(args.repeat, 1)):
        for i, (qps, burst) in enumerate(configs):
            for t, (label, src) in enumerate(trees):
                r = run_one(args.nodes, args.pods, qps, burst, args.profile, src, args.tls)
                runs.setdefault((i, t), []).append(r)
                print(
                    f"qps {qps:g} burst {burst}{' ' + label if label else ''}: "
                    f"{r.pods_per_s:.1f} pods/s ({r.seconds:.2f} s; kubesched CPU "
                    f"{r.sched_cpu:.2f} s, double CPU {r.double_cpu:.2f} s)",
                    file=sys.stderr,
                    flush=True,
                )
    rows = []
    for i, (qps, burst) in enumerate(configs):
        for t, (label, _) in enumerate(trees):
            got = runs[(i, t)]
            best = max(got, key=lambda r: r.pods_per_s)
            parts = [label or ("this" if len(trees) > 1 else "")]
            if len(got) > 1:
                every = sorted(r.pods_per_s for r in got)
                parts.append(f"best of {len(got)} ({every[0]:.0f}-{every[-1]:.0f})")
            if t:
                ratios = [
                    a.pods_per_s / b.pods_per_s for a, b in zip(runs[(i, 0)], got, strict=True)
                ]
                parts.append("this / that, run by run: " + ", ".join(f"{x:.2f}" for x in ratios))
            if best.warnings:
                parts.append(f"{best.warnings} warnings logged")
            note = "; ".join(p for p in parts if p)
            rows.append(
                f"| {qps:g} / {burst} | {args.nodes} / {args.pods} | {best.pods_per_s:.1f} "
                f"| {best.seconds:.2f} | {best.create_seconds:.2f} | {best.sched_cpu:.2f} "
                f"| {best.double_cpu:.2f} | {best.rss_mib:.1f} | {note} |"
            )
    print(
        "\n".join(
            [
                f"Machine: {machine()}",
                "",
                "Python speed during the run (10 million loop additions, before / after): "
                f"{speed:.2f} s / {calibration():.2f} s",
                "",
                "The double and kubesched share the machine's cores; CPU seconds are each "
                "side's during the measured phase (the double's include creating the pods).",
                "",
                "| qps / burst | nodes / pods | pods/s | wall s | create s "
                "| kubesched CPU s | double CPU s | kubesched peak RSS MiB | note |",
                "|---|---|---|---|---|---|---|---|---|",
                *rows,
            ]
        )
    )


if __name__ == "__main__":
    main()
