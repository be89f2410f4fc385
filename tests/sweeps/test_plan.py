"""Sweep plans (no cluster): seeds, parameters, the order of combinations, and the
RunSpec each combination runs."""

from __future__ import annotations

from fractions import Fraction

import pytest

from kubesched.api.errors import InputError
from kubesched.sim.runspec import RunSpec, gates
from kubesched.sweeps.plan import DEFAULT_CONFIG, parse_param, parse_seeds, plan


def test_seeds_ranges_and_lists_keep_their_order_once() -> None:
    assert parse_seeds("0-3") == [0, 1, 2, 3]
    assert parse_seeds("7, 2-3,2,9") == [7, 2, 3, 9]
    assert parse_seeds("5") == [5]


@pytest.mark.parametrize("text", ["", "a", "3-1", "-1", "1-", "1,,2", "1.5"])
def test_bad_seeds_name_the_flag(text: str) -> None:
    with pytest.raises(InputError, match=r"^--seeds: "):
        parse_seeds(text)


def test_param_text() -> None:
    assert parse_param("sample=100, 10%") == ("sample", ["100", "10%"])
    for bad in ("sample", "=1", "sample=", "sample=1,"):
        with pytest.raises(InputError, match=r"^--param: "):
            parse_param(bad)


def test_combinations_in_order_with_their_runspecs() -> None:
    base = RunSpec(trace="openb:x", feature_gates="SchedulerAsyncPreemption=true")
    combos = plan(
        base,
        configs=[None, "b.yaml"],
        seeds=[4, 2],
        params=[
            ("time-scale", ["1", "1/1000"]),
            ("SchedulerAsyncPreemption", ["false"]),
            ("until", ["90s"]),
        ],
    )
    assert [(c.config, c.params[0][1], c.seed) for c in combos] == [
        (DEFAULT_CONFIG, "1", 4),
        (DEFAULT_CONFIG, "1", 2),
        (DEFAULT_CONFIG, "1/1000", 4),
        (DEFAULT_CONFIG, "1/1000", 2),
        ("b.yaml", "1", 4),
        ("b.yaml", "1", 2),
        ("b.yaml", "1/1000", 4),
        ("b.yaml", "1/1000", 2),
    ]
    last = combos[-1].spec
    assert last.config_file == "b.yaml"
    assert last.seed == 2
    assert last.trace == "openb:x"
    assert last.trace_options.time_scale == Fraction(1, 1000)
    assert last.until == 90 * 10**9
    assert gates(last) == {"SchedulerAsyncPreemption": False}  # the swept value wins
    assert combos[0].spec.config_file is None


def test_every_trace_option_reaches_the_import_options() -> None:
    values = {
        "sample": ("10%", Fraction(1, 10)),
        "limit": ("50", 50),
        "node-fraction": ("1.5", Fraction(3, 2)),
        "drop-nodes": ("3", 3),
        "gpu-share": ("milli", "milli"),
        "max-pods": ("20", 20),
        "no-deletions": ("TRUE", True),
    }
    combos = plan(RunSpec(trace="openb:x"), params=[(k, [v[0]]) for k, v in values.items()])
    options = combos[0].spec.trace_options
    assert options.sample == Fraction(1, 10)
    assert (options.limit, options.node_fraction, options.drop_nodes) == (50, Fraction(3, 2), 3)
    assert (options.gpu_share, options.max_pods, options.no_deletions) == ("milli", 20, True)


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ([("colour", ["red"])], 'unknown parameter "colour"'),
        ([("sample", ["0"])], 'sample: "0" must be at least 1'),
        ([("time-scale", ["fast"])], 'time-scale: "fast" is not a number'),
        ([("gpu-share", ["half"])], 'gpu-share: "half" is not one of'),
        ([("until", ["soon"])], "until: "),
        ([("until", ["-1s"])], 'until: "-1s" must not be negative'),
        ([("SchedulerAsyncPreemption", ["maybe"])], "is not true or false"),
        ([("until", ["1s"]), ("until", ["2s"])], "given twice"),
    ],
)
def test_bad_parameters_fail_before_any_run(
    params: list[tuple[str, list[str]]], message: str
) -> None:
    with pytest.raises(InputError, match=r"^--param: ") as err:
        plan(RunSpec(trace="openb:x"), params=params)
    assert message in str(err.value)


def test_trace_options_need_a_trace() -> None:
    with pytest.raises(InputError, match="needs --trace"):
        plan(RunSpec(files=("a.yaml",)), params=[("sample", ["10"])])
    assert plan(RunSpec(files=("a.yaml",)), params=[("until", ["1m"])])[0].spec.until == 60 * 10**9


def test_no_seeds_is_an_error() -> None:
    with pytest.raises(InputError, match="no seeds"):
        plan(RunSpec(files=("a.yaml",)), seeds=[])


def test_a_trace_runs_under_a_configuration_alone(trace: str, config_file: str) -> None:
    """``--trace`` with ``--config`` and no ``-f`` (the sweep's usual case) reads the
    configuration; it used to fail with "no objects passed to apply"."""
    from kubesched.sim.runspec import load

    loaded = load(RunSpec(trace=trace, config_file=config_file))
    assert loaded.scenario.config.pod_initial_backoff_seconds == 7
    assert load(RunSpec(trace=trace)).scenario.config.pod_initial_backoff_seconds == 1
    with pytest.raises(InputError, match=r"no-such\.yaml: no such file"):
        load(RunSpec(trace=trace, config_file="no-such.yaml"))
