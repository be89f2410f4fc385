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

CONFIGURED: tuple[tuple[str, str], ...] = (
    ("compare/scenario.yaml", "compare/least-allocated.yaml"),
    ("compare/scenario.yaml", "compare/most-allocated.yaml"),
)
"""(input, ``--config``): the configurations of ``examples/compare``, which are
not manifests (every other example file is one)."""


@dataclass(frozen=True, slots=True)
class ExampleCase:
    files: tuple[str, ...]
    """Paths relative to ``examples/``, in ``-f`` order."""
    config: str | None = None
    """``--config``, relative to ``examples/``."""

    @property
    def id(self) -> str:
        joined = "+".join(self.files)
        return joined if self.config is None else f"{joined}@{Path(self.config).stem}"

    @property
    def stored(self) -> Path:
        """``<dir>/<stem>.json``; a combined case joins the stems with ``+``
        (``real/cluster+what-if.json``), a configured one adds ``@<config stem>``."""
        first = Path(self.files[0])
        stems = "+".join(Path(f).stem for f in self.files)
        if self.config is not None:
            stems += f"@{Path(self.config).stem}"
        return STORED / first.parent / f"{stems}.json"

    def args(self, *, exact: bool) -> list[str]:
        args = ["simulate"]
        for f in self.files:
            args += ["-f", str(EXAMPLES / f)]
        if self.config is not None:
            args += ["--config", str(EXAMPLES / self.config)]
        args += ["-o", "json"]
        if exact:
            args.append("--exact")
        return args


def cases() -> list[ExampleCase]:
    """Every example file alone (not the configurations), then the combined inputs,
    then the configured ones."""
    configs = {c for _, c in CONFIGURED}
    singles = [
        ExampleCase((rel,))
        for p in sorted(EXAMPLES.rglob("*.yaml"))
        if (rel := p.relative_to(EXAMPLES).as_posix()) not in configs
    ]
    configured = [ExampleCase((f,), c) for f, c in CONFIGURED]
    return singles + [ExampleCase(files) for files in COMBINED] + configured


def simulate_json(case: ExampleCase, *, exact: bool) -> bytes:
    """The bytes ``kubesched simulate ... -o json`` writes on stdout, run in-process;
    AssertionError (with stderr) when it does not exit 0."""
    result = CliRunner().invoke(main, case.args(exact=exact))
    assert result.exit_code == 0, f"{case.id}: exit {result.exit_code}: {result.stderr}"
    return result.stdout_bytes
