"""What a command loads: the RunSpec each builds of its flags (``runspec_from_options``,
the one ``runspec.load`` is given, field by field) and ``load_input``'s errors and notes."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from kubesched.api.errors import InputError
from kubesched.api.input_limits import DEFAULT_MAX_OBJECTS, InputLimits
from kubesched.api.types import NANOS
from kubesched.cli.input import OUT_OF_MEMORY
from kubesched.cli.main import main
from kubesched.sim import runspec
from kubesched.sim.runspec import RunSpec
from kubesched.sim.traces import ImportOptions

MI = 1 << 20
SCENARIO = str(Path(__file__).resolve().parents[2] / "examples" / "compare" / "scenario.yaml")


def specs_loaded(monkeypatch: pytest.MonkeyPatch, *args: str, stop: bool = True) -> list[RunSpec]:
    """The RunSpecs ``kubesched ARGS`` loads (the first only when ``stop``)."""
    got: list[RunSpec] = []
    real = runspec.load

    def load(spec: RunSpec, **kwargs: Any) -> runspec.Loaded:
        got.append(spec)
        if stop:
            raise InputError("stopped after load")  # the command ends there
        return real(spec, **kwargs)

    monkeypatch.setattr("kubesched.cli.input.load", load)
    monkeypatch.setattr(runspec, "load", load)
    r = CliRunner().invoke(main, list(args))
    assert "stopped after load" in r.output if stop else r.exit_code == 0, r.output
    return got


def test_simulate_gives_every_flag_to_the_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    got = specs_loaded(
        monkeypatch,
        *("simulate", "-f", "a.yaml", "-f", "b.yaml", "--config", "c.yaml", "--seed", "7"),
        *("--until", "90s", "--feature-gates", "X=true", "--per-node"),
        *("--max-input-bytes", "1Mi", "--max-objects", "10"),
        *("--trace", "openb:t.csv", "--sample", "0.5", "--max-pods", "30", "--no-deletions"),
    )
    assert got == [
        RunSpec(
            files=("a.yaml", "b.yaml"),
            config_file="c.yaml",
            seed=7,
            until=90 * NANOS,
            feature_gates="X=true",
            per_node=True,
            trace="openb:t.csv",
            trace_options=ImportOptions(
                seed=7, sample=Fraction(1, 2), max_pods=30, no_deletions=True, max_input_bytes=MI
            ),
            limits=InputLimits(MI, 10),
        )
    ]


def test_explain_has_no_trace_and_the_default_object_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    got = specs_loaded(
        monkeypatch,
        *("explain", "p", "-f", "a.yaml", "--config", "c.yaml", "--seed", "3"),
        *("--until", "1s", "--feature-gates", "X=false", "--max-input-bytes", "2Mi"),
    )
    assert got == [
        RunSpec(
            files=("a.yaml",),
            config_file="c.yaml",
            seed=3,
            until=NANOS,
            feature_gates="X=false",
            limits=InputLimits(2 * MI, DEFAULT_MAX_OBJECTS),
        )
    ]


def test_compare_gives_each_variant_its_seed_and_the_shared_flags(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    got = specs_loaded(
        monkeypatch,
        *("compare", "-f", SCENARIO, "--seed", "1", "--seed", "2", "--until", "5s"),
        *("--max-input-bytes", "3Mi", "--max-objects", "99", "--limit", "4"),
        stop=False,
    )
    assert got == [
        RunSpec(
            files=(SCENARIO,),
            seed=seed,
            until=5 * NANOS,
            trace_options=ImportOptions(seed=seed, limit=4, max_input_bytes=3 * MI),
            limits=InputLimits(3 * MI, 99),
        )
        for seed in (1, 2)
    ]


@pytest.mark.parametrize("command", ["simulate", "explain"])
def test_running_out_of_memory_reading_is_an_input_error(
    monkeypatch: pytest.MonkeyPatch, command: str
) -> None:
    def load(spec: RunSpec, **kwargs: Any) -> runspec.Loaded:
        raise MemoryError

    monkeypatch.setattr("kubesched.cli.input.load", load)
    args = [command, "-f", SCENARIO] if command == "simulate" else [command, "p", "-f", SCENARIO]
    r = CliRunner().invoke(main, args)
    assert r.exit_code == 2
    assert r.stderr.strip() == f"error: {OUT_OF_MEMORY}"


def test_simulate_and_explain_print_the_input_notes(tmp_path: Path) -> None:
    f = tmp_path / "in.yaml"
    f.write_text(
        Path(SCENARIO).read_text() + "\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
    )
    for args in (["simulate", "-f", str(f)], ["explain", "default/x", "-f", str(f)]):
        r = CliRunner().invoke(main, args)
        assert "ignored 1 objects: 1 ConfigMap" in r.stderr, args
