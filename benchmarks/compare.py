"""Compare two source trees on the standard benchmark set, interleaved run by run.

    .venv/bin/python benchmarks/compare.py --old /work/main --new . [--repeat 5] \\
        [--quick | --rows 1,3] [--exact] [--out FILE]

``--old`` and ``--new`` are source trees (a checkout or worktree; its ``src/``, or
a ``src`` directory itself). Every row of ``benchmarks/standard.py``'s
``STANDARD`` (this file's tree) runs as ``kubesched bench WORKLOAD ... -o json``
in a fresh process of this Python, with ``PYTHONPATH`` pointing at one tree's
``src``: per row ``old, new, old, new, ...`` (``--repeat`` rounds), so both trees
see the same machine. On a shared machine whose speed swings two-fold within
minutes, only the ratio of runs taken side by side means anything; the best run
of each side is the steadiest measure of its code (as ``timeit`` reports the
minimum), and the table prints it with the range of all runs.

Each row prints old and new best pods/s, the ratio new/old, and both sides'
runs; ``DIFFERENT`` in the note when the trees disagree on the decisions a bench
run reports (scheduled, preemptions, cycles, churn pods): a speed comparison of
two trees that decide differently compares different work. Before and after the
rows it prints the Python-speed calibration line ``standard.py`` prints (10
million loop additions). ``--quick``: the first row of each workload only, as
``standard.py --quick``; ``--rows 1,3``: those rows (1-based); ``--exact``: pass
``--exact`` to every run. The issue-14 budget: no row below 0.90.

Before running, each tree's ``kubesched`` module is imported once to check that
``PYTHONPATH`` really selects it (an editable install elsewhere must not win).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.standard import STANDARD, calibration, machine  # noqa: E402

DECISIONS = ("scheduled", "preemptions", "cycles", "churnPods")
"""Fields of ``bench -o json`` that depend on decisions only, not on speed."""


def source_dir(tree: str) -> Path:
    """The ``src`` directory of a tree given as a checkout or as ``src`` itself."""
    path = Path(tree).resolve()
    if (path / "src" / "kubesched").is_dir():
        return path / "src"
    if (path / "kubesched").is_dir():
        return path
    sys.exit(f"{tree}: neither {tree}/src/kubesched nor {tree}/kubesched exists")


def bench_env(src: Path) -> dict[str, str]:
    """The runs' environment: this tree on the path, bytecode allowed (a tree with
    more modules must not pay for compiling them in every run when
    ``PYTHONDONTWRITEBYTECODE`` is set, as an installed package never does)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(PYTHONPATH=str(src), CI="1")
    return env


def compile_tree(src: Path) -> None:
    """Byte-compile ``src`` once, so that no run pays for compiling it."""
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", str(src)], check=True, env=bench_env(src)
    )


def check_import(src: Path) -> None:
    """Exit unless ``PYTHONPATH=src`` makes this Python import kubesched from ``src``."""
    out = subprocess.run(
        [sys.executable, "-c", "import kubesched; print(kubesched.__file__)"],
        check=True,
        capture_output=True,
        text=True,
        env=bench_env(src),
    ).stdout.strip()
    if not Path(out).resolve().is_relative_to(src):
        sys.exit(f"PYTHONPATH={src} imports kubesched from {out}, not from that tree")


def describe(src: Path) -> str:
    """``src`` with its checkout's commit (``+dirty`` when it has local changes)."""
    git = ["git", "-C", str(src)]
    head = subprocess.run(
        [*git, "rev-parse", "--short", "HEAD"], check=False, capture_output=True, text=True
    )
    if head.returncode != 0:
        return str(src)
    dirty = subprocess.run(
        [*git, "status", "--porcelain", "--", "."], check=False, capture_output=True, text=True
    )
    return f"{src} (commit {head.stdout.strip()}{'+dirty' if dirty.stdout.strip() else ''})"


def run_one(src: Path, args: list[str]) -> dict[str, object] | str:
    """One ``kubesched bench ... -o json`` run of tree ``src``: its JSON document, or
    the error text when the run failed (e.g. an option the old tree lacks)."""
    cmd = [sys.executable, "-m", "kubesched.cli.main", "bench", *args, "-o", "json"]
    out = subprocess.run(cmd, check=False, capture_output=True, text=True, env=bench_env(src))
    if out.returncode != 0:
        lines = out.stderr.strip().splitlines()
        return f"exit {out.returncode}: {lines[-1] if lines else ''}"
    doc: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return doc


def bench_args(workload: str, nodes: int, init: int, pods: int, exact: bool) -> list[str]:
    args = [workload, "--nodes", str(nodes), "--init-pods", str(init), "--pods", str(pods)]
    return [*args, "--exact"] if exact else args


def choose(quick: bool, rows: str | None) -> list[tuple[int, tuple[object, ...]]]:
    """(1-based row number, STANDARD row) of the rows to run."""
    numbered = list(enumerate(STANDARD, start=1))
    if rows:
        wanted = {int(x) for x in rows.split(",")}
        unknown = wanted - {i for i, _ in numbered}
        if unknown:
            sys.exit(f"--rows: no row {sorted(unknown)} (1-{len(STANDARD)})")
        return [(i, r) for i, r in numbered if i in wanted]
    if not quick:
        return numbered
    seen: set[object] = set()
    out = []
    for i, row in numbered:
        if row[:2] in seen or row[-1] == "scaling":
            continue
        seen.add(row[:2])
        out.append((i, row))
    return out


def _best(runs: list[dict[str, object] | str]) -> float | None:
    ok = [float(str(r["throughput"])) for r in runs if isinstance(r, dict)]
    return max(ok) if ok else None


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}"


def _runs(runs: list[dict[str, object] | str]) -> str:
    return " ".join(f"{r['throughput']}" if isinstance(r, dict) else "error" for r in runs)


def row_line(
    row: tuple[object, ...], old: list[dict[str, object] | str], new: list[dict[str, object] | str]
) -> str:
    workload, tmpl, nodes, init, pods = row[:5]
    workload = f"{workload}" if tmpl is None else f"{workload} ({tmpl})"
    o, n = _best(old), _best(new)
    ratio = f"{n / o:.3f}" if o and n is not None else "-"
    notes = [r for r in (*old, *new) if isinstance(r, str)][:1]
    decided = {tuple(r.get(k) for k in DECISIONS) for r in (*old, *new) if isinstance(r, dict)}
    if len(decided) > 1:
        notes.append(
            "DIFFERENT decisions: "
            + "; ".join(
                ", ".join(f"{k}={v}" for k, v in zip(DECISIONS, d, strict=True))
                for d in sorted(decided, key=str)
            )
        )
    return (
        f"| {workload} | {nodes} / {init} / {pods} | {_fmt(o)} | {_fmt(n)} | {ratio} "
        f"| {_runs(old)} | {_runs(new)} | {'; '.join(notes)} |"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--old", required=True, help="The baseline source tree.")
    ap.add_argument("--new", required=True, help="The source tree under test.")
    ap.add_argument("--repeat", type=int, default=5, help="Runs per row and tree (best reported).")
    ap.add_argument("--quick", action="store_true", help="Only the first row of each workload.")
    ap.add_argument("--rows", default=None, help="Comma-separated 1-based rows of STANDARD.")
    ap.add_argument("--exact", action="store_true", help="Pass --exact to every run.")
    ap.add_argument("--out", default=None, help="Write the markdown table here too.")
    args = ap.parse_args(argv)
    old_src, new_src = source_dir(args.old), source_dir(args.new)
    check_import(old_src)
    check_import(new_src)
    for src in (old_src, new_src):
        compile_tree(src)
    chosen = choose(args.quick, args.rows)
    before = calibration()
    trees = f"old: {describe(old_src)}\nnew: {describe(new_src)}"
    print(f"{trees}\nPython speed before: {before:.2f} s", flush=True)
    lines = []
    for _, row in chosen:
        workload, tmpl, nodes, init, pods = (str(x) for x in row[:5])
        cmd = bench_args(workload, int(nodes), int(init), int(pods), args.exact)
        if tmpl != "None":
            cmd += ["--preemptor-template", tmpl]
        old: list[dict[str, object] | str] = []
        new: list[dict[str, object] | str] = []
        for _ in range(max(args.repeat, 1)):
            old.append(run_one(old_src, cmd))
            new.append(run_one(new_src, cmd))
        lines.append(row_line(row, old, new))
        print(lines[-1], flush=True)
    table = "\n".join(
        [
            f"Machine: {machine()}",
            trees,
            "",
            "Python speed during the run (10 million loop additions, before / after): "
            f"{before:.2f} s / {calibration():.2f} s",
            "",
            "| workload | nodes / init / measured | old pods/s | new pods/s | new/old "
            "| old runs | new runs | note |",
            "|---|---|---|---|---|---|---|---|",
            *lines,
        ]
    )
    print()
    print(table)
    if args.out:
        Path(args.out).write_text(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
