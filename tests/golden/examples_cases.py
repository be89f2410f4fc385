"""The example cases of the golden tests: every ``examples/**/*.yaml`` alone, plus
the inputs the README runs together (``examples/real``: a live cluster's dump and
the what-if pod created against it).

Each case's stored file is ``tests/golden/examples/<case>.json``: the exact bytes
``kubesched simulate -f ... -o json`` prints, the same with ``--exact`` (the per-node
paths only; today both paths print the same bytes, and the test holds them to it).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from kubesched.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
STORED = Path(__file__).resolve().parent / "examples"

COMBINED: tuple[tuple[str, ...], ...] = (("real/cluster.yaml", "real/what-if.yaml"),)
"""Inputs passed together (``-f A -f B``), as the README runs them."""


@dataclass(frozen=True, slots=True)
class ExampleCase:
    files: tuple[str, ...]
    """Paths relative to ``examples/``, in ``-f`` order."""

    @property
    def id(self) -> str:
        return "+".join(self.files)

    @property
    def stored(self) -> Path:
        """``<dir>/<stem>.json``; a combined case joins the stems with ``+``
        (``real/cluster+what-if.json``)."""
        first = Path(self.files[0])
        stems = "+".join(Path(f).stem for f in self.files)
        return STORED / first.parent / f"{stems}.json"

    def args(self, *, exact: bool) -> list[str]:
        args = ["simulate"]
        for f in self.files:
            args += ["-f", str(EXAMPLES / f)]
        args += ["-o", "json"]
        if exact:
            args.append("--exact")
        return args


def cases() -> list[ExampleCase]:
    """Every example file alone, then the combined inputs."""
    singles = [
        ExampleCase((p.relative_to(EXAMPLES).as_posix(),)) for p in sorted(EXAMPLES.rglob("*.yaml"))
    ]
    return singles + [ExampleCase(files) for files in COMBINED]


def simulate_json(case: ExampleCase, *, exact: bool) -> bytes:
    """The bytes ``kubesched simulate ... -o json`` writes on stdout, run in-process;
    AssertionError (with stderr) when it does not exit 0."""
    result = CliRunner().invoke(main, case.args(exact=exact))
    assert result.exit_code == 0, f"{case.id}: exit {result.exit_code}: {result.stderr}"
    return result.stdout_bytes
