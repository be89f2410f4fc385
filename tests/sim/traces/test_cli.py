"""``kubesched import`` and the ``simulate --trace`` helpers (cli/trace_commands.py),
run inside a ``kubesched``-like group as cli/main.py registers them."""

from __future__ import annotations

import re
from collections.abc import Sequence
from fractions import Fraction
from pathlib import Path
from typing import Any

import click
import pytest
import yaml
from click.testing import CliRunner, Result

from kubesched.api.errors import InputError
from kubesched.cli.input import load_input
from kubesched.cli.main import KubeschedGroup
from kubesched.cli.trace_commands import (
    echo_replay_summary,
    import_,
    import_options,
    trace_options,
)
from kubesched.sim.runspec import RunSpec, load
from kubesched.sim.scenario import load_scenario, run_scenario
from kubesched.sim.traces import ImportOptions, TierPriority
from tests.sim.traces.data import node_row, pod_row, write_trace


@click.group(cls=KubeschedGroup)
def cli() -> None:
    """Stands in for kubesched.cli.main:main."""


cli.add_command(import_, name="import")


def invoke(args: Sequence[str]) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture
def paths(tmp_path: Path) -> list[str]:
    return write_trace(
        tmp_path,
        [node_row("n-0", gpu=2, model="T4"), node_row("n-1")],
        [
            pod_row("a", num_gpu=1, gpu_milli=500, created=0, deleted=60),
            pod_row("b", qos="BE", created=5, scheduled="", deleted=9),
            pod_row("c", qos="Burstable", created=7),
        ],
    )


def test_import_to_stdout(paths: list[str]) -> None:
    result = invoke(["import", "openb", *paths, "--stdout"])
    assert result.exit_code == 0, result.output
    docs = list(yaml.safe_load_all(result.stdout))
    assert [d["kind"] for d in docs] == ["PriorityClass"] * 4 + ["Node"] * 2 + ["Pod"] * 3
    assert result.stderr == (
        "imported 3 pods (LS 1, BE 1, Burstable 1), 2 nodes; "
        "1 with fractional GPU rounded up to 1; "
        "1 never scheduled in the trace: deleted at deletion_time; "
        "1 without deletion_time: run to the end\n"
    )


def test_import_to_a_directory_loads_as_a_scenario(paths: list[str], tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = invoke(["import", "openb", *paths, "-o", str(out), "--time-scale", "0.5"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "nodes.yaml",
        "pods.yaml",
        "priorityclasses.yaml",
    ]
    assert result.stderr.startswith(f"wrote {out}/priorityclasses.yaml\n")
    scenario = load_scenario([str(out)])
    assert [(i.obj.name, i.create_at / 1e9) for i in scenario.items if i.kind == "Pod"] == [
        ("a", 0.0),
        ("b", 2.5),
        ("c", 3.5),
    ]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param([], "give exactly one of --stdout and -o DIR", id="no output named"),
        pytest.param(
            ["--stdout", "-o", "x"], "give exactly one of --stdout and -o DIR", id="both outputs"
        ),
        pytest.param(["--stdout", "--sample", "0"], "must be at least 1", id="sample of zero"),
        pytest.param(
            ["--stdout", "--sample", "1.5"], "a fraction must be at most 1", id="sample 1.5"
        ),
        pytest.param(["--stdout", "--time-scale", "-1"], "must be positive", id="negative scale"),
        pytest.param(
            ["--stdout", "--priorities", "LS=x"], '"x" is not an integer', id="bad priority"
        ),
        pytest.param(
            ["--stdout", "--priorities", "LS=2000000000"],
            "maximum allowed value of a user defined priority is 1000000000",
            id="priority above the user maximum",
        ),
        pytest.param(
            ["--stdout", "--priorities", "LS=1:Sometimes"],
            "preemption policy must be PreemptLowerPriority or Never",
            id="bad preemption policy",
        ),
        pytest.param(["--stdout", "--gpu-share", "half"], "'half' is not one of", id="bad mode"),
    ],
)
def test_bad_flags_exit_2(paths: list[str], args: list[str], message: str) -> None:
    result = invoke(["import", "openb", *paths, *args])
    assert result.exit_code == 2
    assert message in result.output


def test_unknown_format_and_bad_file_exit_2(paths: list[str], tmp_path: Path) -> None:
    result = invoke(["import", "alibaba2018", *paths, "--stdout"])
    assert result.exit_code == 2
    assert 'unknown trace format "alibaba2018"; known: openb' in result.output
    Path(paths[1]).write_text(Path(paths[1]).read_text().replace(",LS,", ",Gold,"))
    result = invoke(["import", "openb", *paths, "--stdout"])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {paths[1]}: line 2: qos: unknown tier")


def test_options_reach_the_importer() -> None:
    seen: dict[str, Any] = {}

    @click.command()
    @trace_options(seed=False)
    def probe(**values: Any) -> None:
        seen.update(values)

    result = CliRunner().invoke(
        probe,
        [
            "--sample=10%",
            "--time-scale=1/1000",
            "--node-fraction=0.8",
            "--drop-nodes=2",
            "--gpu-share=skip",
            "--priorities=BE=0:Never",
            "--max-pods=64",
            "--no-deletions",
            "--limit=500",
        ],
    )
    assert result.exit_code == 0, result.output
    assert import_options(9, **seen) == ImportOptions(
        seed=9,
        limit=500,
        sample=Fraction(1, 10),
        time_scale=Fraction(1, 1000),
        node_fraction=Fraction(4, 5),
        drop_nodes=2,
        gpu_share="skip",
        priorities={"BE": TierPriority(0, "Never")},
        max_pods=64,
        no_deletions=True,
    )


def test_simulate_trace_helpers(paths: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    loaded = load_input(RunSpec(trace="openb:" + ",".join(paths)), False, None, None)
    assert loaded.trace is not None
    assert loaded.horizon == loaded.trace.last_event + 24 * 3600 * 10**9  # short: one day more
    assert "imported 3 pods" in capsys.readouterr().err
    run = run_scenario(loaded.scenario, horizon=loaded.horizon)
    echo_replay_summary(run)
    err = capsys.readouterr().err
    assert err.splitlines()[0].split()[:3] == ["TIER", "PRIORITY", "PODS"]
    assert "nvidia.com/gpu: allocated" in err


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        pytest.param("openb", "expected FORMAT:PATH[,PATH...]", id="no colon"),
        pytest.param("openb:", "no trace file given", id="no files"),
        pytest.param("gcp:a.csv", 'unknown trace format "gcp"', id="unknown format"),
    ],
)
def test_bad_trace_spec(spec: str, message: str) -> None:
    with pytest.raises(InputError, match=re.escape(message)):
        load(RunSpec(trace=spec))
