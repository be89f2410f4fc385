"""Go durations against Go's own tests (src/time/time_test.go)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.api.duration import (
    HOUR,
    MICROSECOND,
    MILLISECOND,
    MINUTE,
    NANOSECOND,
    SECOND,
    DurationError,
    format_duration,
    parse_duration,
)

MAX = 2**63 - 1
MIN = -(2**63)

# TestParseDuration's table (parseDurationTests).
PARSE_TABLE = [
    ("0", 0),
    ("5s", 5 * SECOND),
    ("30s", 30 * SECOND),
    ("1478s", 1478 * SECOND),
    ("-5s", -5 * SECOND),
    ("+5s", 5 * SECOND),
    ("-0", 0),
    ("+0", 0),
    ("5.0s", 5 * SECOND),
    ("5.6s", 5 * SECOND + 600 * MILLISECOND),
    ("5.s", 5 * SECOND),
    (".5s", 500 * MILLISECOND),
    ("1.0s", 1 * SECOND),
    ("1.00s", 1 * SECOND),
    ("1.004s", 1 * SECOND + 4 * MILLISECOND),
    ("1.0040s", 1 * SECOND + 4 * MILLISECOND),
    ("100.00100s", 100 * SECOND + 1 * MILLISECOND),
    ("10ns", 10 * NANOSECOND),
    ("11us", 11 * MICROSECOND),
    ("12\u00b5s", 12 * MICROSECOND),
    ("12\u03bcs", 12 * MICROSECOND),
    ("13ms", 13 * MILLISECOND),
    ("14s", 14 * SECOND),
    ("15m", 15 * MINUTE),
    ("16h", 16 * HOUR),
    ("3h30m", 3 * HOUR + 30 * MINUTE),
    ("10.5s4m", 4 * MINUTE + 10 * SECOND + 500 * MILLISECOND),
    ("-2m3.4s", -(2 * MINUTE + 3 * SECOND + 400 * MILLISECOND)),
    ("1h2m3s4ms5us6ns", HOUR + 2 * MINUTE + 3 * SECOND + 4 * MILLISECOND + 5 * MICROSECOND + 6),
    ("39h9m14.425s", 39 * HOUR + 9 * MINUTE + 14 * SECOND + 425 * MILLISECOND),
    ("52763797000ns", 52763797000),
    ("0.3333333333333333333h", 20 * MINUTE),
    ("9007199254740993ns", 2**53 + 1),
    ("9223372036854775807ns", MAX),
    ("9223372036854775.807us", MAX),
    ("9223372036s854ms775us807ns", MAX),
    ("-9223372036854775808ns", MIN),
    ("-9223372036854775.808us", MIN),
    ("-9223372036s854ms775us808ns", MIN),
    ("-2562047h47m16.854775808s", MIN),
    ("0.100000000000000000000h", 6 * MINUTE),
    ("0.830103483285477580700h", 49 * MINUTE + 48 * SECOND + 372539827),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [pytest.param(t, e, id=f"TestParseDuration/{t}") for t, e in PARSE_TABLE],
)
def test_parse_matches_go_table(text: str, expected: int) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("90s", 90 * SECOND, id="simulate-interface example 90s"),
        pytest.param("5m", 5 * MINUTE, id="simulate-interface example 5m"),
        pytest.param("1h30m", 90 * MINUTE, id="simulate-interface example 1h30m"),
        pytest.param("250ms", 250 * MILLISECOND, id="simulate-interface example 250ms"),
        pytest.param("1.5h", 90 * MINUTE, id="fractional hours"),
        pytest.param("-1s", -SECOND, id="negative"),
        pytest.param("1s1s", 2 * SECOND, id="repeated unit adds up"),
        pytest.param("1.0000000001s", SECOND, id="sub-nanosecond fraction truncates"),
        pytest.param("0.9ns", 0, id="fraction of a nanosecond is zero"),
        pytest.param("0s", 0, id="zero with a unit"),
        pytest.param(
            "9223372036854775808ns9223372036854775808ns",
            0,
            id="uint64 accumulator wraps to zero, as in Go",
        ),
    ],
)
def test_parse_examples(text: str, expected: int) -> None:
    assert parse_duration(text) == expected


# TestParseDurationErrors (the inputs that are valid Python text) plus the message kinds.
@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("", 'time: invalid duration ""', id="TestParseDurationErrors/empty"),
        pytest.param("3", 'time: missing unit in duration "3"', id="TestParseDurationErrors/3"),
        pytest.param("-", 'time: invalid duration "-"', id="TestParseDurationErrors/-"),
        pytest.param("s", 'time: invalid duration "s"', id="TestParseDurationErrors/s"),
        pytest.param(".", 'time: invalid duration "."', id="TestParseDurationErrors/."),
        pytest.param("-.", 'time: invalid duration "-."', id="TestParseDurationErrors/-."),
        pytest.param(".s", 'time: invalid duration ".s"', id="TestParseDurationErrors/.s"),
        pytest.param("+.s", 'time: invalid duration "+.s"', id="TestParseDurationErrors/+.s"),
        pytest.param(
            "1d", 'time: unknown unit "d" in duration "1d"', id="TestParseDurationErrors/1d"
        ),
        pytest.param(
            "\ufffd",
            'time: invalid duration "\\xef\\xbf\\xbd"',
            id="TestParseDurationErrors/RuneError",
        ),
        pytest.param(
            "\ufffd hello \ufffd world",
            'time: invalid duration "\\xef\\xbf\\xbd hello \\xef\\xbf\\xbd world"',
            id="TestParseDurationErrors/RuneError in text",
        ),
        pytest.param(
            "9223372036854775810ns",
            'time: invalid duration "9223372036854775810ns"',
            id="TestParseDurationErrors/overflow 9223372036854775810ns",
        ),
        pytest.param(
            "9223372036854775808ns",
            'time: invalid duration "9223372036854775808ns"',
            id="TestParseDurationErrors/overflow 9223372036854775808ns",
        ),
        pytest.param(
            "-9223372036854775809ns",
            'time: invalid duration "-9223372036854775809ns"',
            id="TestParseDurationErrors/overflow -9223372036854775809ns",
        ),
        pytest.param(
            "9223372036854776us",
            'time: invalid duration "9223372036854776us"',
            id="TestParseDurationErrors/overflow 9223372036854776us",
        ),
        pytest.param(
            "3000000h",
            'time: invalid duration "3000000h"',
            id="TestParseDurationErrors/overflow 3000000h",
        ),
        pytest.param(
            "9223372036854775.808us",
            'time: invalid duration "9223372036854775.808us"',
            id="TestParseDurationErrors/overflow 9223372036854775.808us",
        ),
        pytest.param(
            "9223372036854ms775us808ns",
            'time: invalid duration "9223372036854ms775us808ns"',
            id="TestParseDurationErrors/overflow 9223372036854ms775us808ns",
        ),
        pytest.param(
            "5\u00b5x",
            'time: unknown unit "\\xc2\\xb5x" in duration "5\\xc2\\xb5x"',
            id="non-ASCII unit is quoted byte by byte",
        ),
        pytest.param(
            "\u0663s", 'time: invalid duration "\\xd9\\xa3s"', id="non-ASCII digits are not digits"
        ),
        pytest.param("1..5s", 'time: missing unit in duration "1..5s"', id="two points"),
        pytest.param("1 s", 'time: unknown unit " s" in duration "1 s"', id="space before unit"),
        pytest.param(" 1s", 'time: invalid duration " 1s"', id="leading space"),
        pytest.param("1S", 'time: unknown unit "S" in duration "1S"', id="units are lower case"),
        pytest.param("1sm", 'time: unknown unit "sm" in duration "1sm"', id="run-on units"),
        pytest.param("--1s", 'time: invalid duration "--1s"', id="double sign"),
        pytest.param('"1"s', 'time: invalid duration "\\"1\\"s"', id="quotes are escaped"),
        pytest.param("1\ts", 'time: unknown unit "\\x09s" in duration "1\\x09s"', id="control"),
    ],
)
def test_errors_carry_go_messages(text: str, message: str) -> None:
    with pytest.raises(DurationError) as err:
        parse_duration(text)
    assert str(err.value) == message
    assert isinstance(err.value, ValueError)


# TestDurationString's table (durationTests).
STRING_TABLE = [
    ("0s", 0),
    ("1ns", 1),
    ("1.1\u00b5s", 1100),
    ("2.2ms", 2200 * MICROSECOND),
    ("3.3s", 3300 * MILLISECOND),
    ("4m5s", 4 * MINUTE + 5 * SECOND),
    ("4m5.001s", 4 * MINUTE + 5001 * MILLISECOND),
    ("5h6m7.001s", 5 * HOUR + 6 * MINUTE + 7001 * MILLISECOND),
    ("8m0.000000001s", 8 * MINUTE + 1),
    ("2562047h47m16.854775807s", MAX),
    ("-2562047h47m16.854775808s", MIN),
]


@pytest.mark.parametrize(
    ("expected", "ns"),
    [pytest.param(s, d, id=f"TestDurationString/{s}") for s, d in STRING_TABLE],
)
def test_format_matches_go_table(expected: str, ns: int) -> None:
    assert format_duration(ns) == expected
    if ns > 0:
        assert format_duration(-ns) == "-" + expected


@pytest.mark.parametrize(
    ("ns", "expected"),
    [
        pytest.param(MINUTE, "1m0s", id="a minute"),
        pytest.param(90 * MINUTE, "1h30m0s", id="ninety minutes"),
        pytest.param(250 * MILLISECOND, "250ms", id="milliseconds"),
        pytest.param(1500, "1.5\u00b5s", id="micro sign U+00B5"),
        pytest.param(HOUR, "1h0m0s", id="an hour"),
        pytest.param(1234567890, "1.23456789s", id="trailing zeros dropped"),
    ],
)
def test_format_examples(ns: int, expected: str) -> None:
    assert format_duration(ns) == expected


def test_format_rejects_values_outside_int64() -> None:
    with pytest.raises(ValueError, match="int64"):
        format_duration(2**63)


@given(st.integers(MIN, MAX))
def test_format_then_parse_round_trips(ns: int) -> None:
    assert parse_duration(format_duration(ns)) == ns


@given(
    st.lists(
        st.tuples(
            st.integers(0, 10**6), st.sampled_from(["ns", "us", "\u00b5s", "ms", "s", "m", "h"])
        ),
        min_size=1,
        max_size=4,
    ),
    st.booleans(),
)
def test_integer_components_add_up(parts: list[tuple[int, str]], negative: bool) -> None:
    unit = {"ns": 1, "us": 1000, "\u00b5s": 1000, "ms": 10**6, "s": 10**9, "m": 60 * 10**9}
    unit["h"] = 3600 * 10**9
    text = ("-" if negative else "") + "".join(f"{n}{u}" for n, u in parts)
    total = sum(n * unit[u] for n, u in parts)
    if total > 2**63 - 1 + (1 if negative else 0):
        # Go reports an overflow as an invalid duration.
        with pytest.raises(DurationError, match="invalid duration"):
            parse_duration(text)
        return
    assert parse_duration(text) == (-total if negative else total)


@given(st.text(alphabet="0123456789.+-nsuµμmh d\u00e9", max_size=12) | st.text(max_size=6))
def test_random_text_parses_or_raises_duration_error(text: str) -> None:
    try:
        got = parse_duration(text)
    except DurationError as err:
        assert str(err).startswith("time: ")
    else:
        assert MIN <= got <= MAX
