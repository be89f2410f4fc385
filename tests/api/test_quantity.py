"""Quantity parsing against apimachinery's resource package (quantity_test.go)."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.api.quantity import (
    ERR_FORMAT_WRONG,
    ERR_NUMERIC,
    ERR_OUT_OF_RANGE,
    ERR_SUFFIX,
    ERR_TOO_LARGE,
    MAX_INT64,
    QuantityError,
    canonical_string,
    format_bytes,
    format_milli_cpu,
    milli_value,
    parse_quantity,
    parse_quantity_json,
    scheduler_amount,
    value,
)

F = Fraction
KI, MI, GI, TI, PI, EI = (2**e for e in (10, 20, 30, 40, 50, 60))


def dec(mantissa: int, exponent: int) -> Fraction:
    """decQuantity(mantissa, exponent) of the upstream tests: mantissa * 10^exponent."""
    return F(mantissa) * F(10) ** exponent


# TestQuantityParse's table (upstream's expected values re-expressed as exact numbers).
PARSE_TABLE = [
    ("0", dec(0, 0)),
    ("0n", dec(0, 0)),
    ("0u", dec(0, 0)),
    ("0m", dec(0, 0)),
    ("0Ki", dec(0, 0)),
    ("0k", dec(0, 0)),
    ("0Mi", dec(0, 0)),
    ("0M", dec(0, 0)),
    ("0Gi", dec(0, 0)),
    ("0G", dec(0, 0)),
    ("0Ti", dec(0, 0)),
    ("0T", dec(0, 0)),
    ("1", dec(1, 0)),
    ("1Ki", F(1024)),
    ("8Ki", F(8 * 1024)),
    ("7Mi", F(7 * MI)),
    ("6Gi", F(6 * GI)),
    ("5Ti", F(5 * TI)),
    ("4Pi", F(4 * PI)),
    ("3Ei", F(3 * EI)),
    ("10Ti", F(10 * TI)),
    ("100Ti", F(100 * TI)),
    ("5n", dec(5, -9)),
    ("4u", dec(4, -6)),
    ("3m", dec(3, -3)),
    ("9", dec(9, 0)),
    ("8k", dec(8, 3)),
    ("50k", dec(5, 4)),
    ("7M", dec(7, 6)),
    ("6G", dec(6, 9)),
    ("5T", dec(5, 12)),
    ("40T", dec(4, 13)),
    ("300T", dec(3, 14)),
    ("2P", dec(2, 15)),
    ("1E", dec(1, 18)),
    ("1E-3", dec(1, -3)),
    ("1e3", dec(1, 3)),
    ("1E6", dec(1, 6)),
    ("1e9", dec(1, 9)),
    ("1E12", dec(1, 12)),
    ("1e15", dec(1, 15)),
    ("1E18", dec(1, 18)),
    ("1e14", dec(1, 14)),
    ("1e13", dec(1, 13)),
    ("100.035k", dec(100035, 0)),
    ("0.001", dec(1, -3)),
    ("0.0005k", dec(5, -1)),
    ("0.005", dec(5, -3)),
    ("0.05", dec(5, -2)),
    ("0.5", dec(5, -1)),
    ("0.00050k", dec(5, -1)),
    ("0.00500", dec(5, -3)),
    ("0.05000", dec(5, -2)),
    ("0.50000", dec(5, -1)),
    ("0.5e0", dec(5, -1)),
    ("0.5e-1", dec(5, -2)),
    ("0.5e-2", dec(5, -3)),
    ("10.035M", dec(10035, 3)),
    ("1.2e3", dec(12, 2)),
    ("1.3E+6", dec(13, 5)),
    ("1.40e9", dec(14, 8)),
    ("1.53E12", dec(153, 10)),
    ("1.6e15", dec(16, 14)),
    ("1.7E18", dec(17, 17)),
    ("9.01", dec(901, -2)),
    ("8.1k", dec(81, 2)),
    ("7.123456M", dec(7123456, 0)),
    ("6.987654321G", dec(6987654321, 0)),
    ("5.444T", dec(5444, 9)),
    ("40.1T", dec(401, 11)),
    ("300.2T", dec(3002, 11)),
    ("2.5P", dec(25, 14)),
    ("1.01E", dec(101, 16)),
    # Things that saturate/round.
    ("3.001n", dec(4, -9)),
    ("1.1E-9", dec(2, -9)),
    ("0.0000000001", dec(1, -9)),
    ("0.0000000005", dec(1, -9)),
    ("0.00000000050", dec(1, -9)),
    ("0.5e-9", dec(1, -9)),
    ("0.9n", dec(1, -9)),
    ("0.00000012345", dec(124, -9)),
    ("0.00000012354", dec(124, -9)),
    ("9Ei", F(MAX_INT64)),
    ("9223372036854775807Ki", F(MAX_INT64)),
    ("12E", dec(12, 18)),
    # Fractional binary.
    ("100.035Ki", dec(10243584, -2)),
    ("0.5Mi", F(MI // 2)),
    ("0.05Gi", dec(536870912, -1)),
    ("0.025Ti", dec(274877906944, -1)),
    # "Things written by trolls".
    ("0.000000000001Ki", dec(2, -9)),
    (".001", dec(1, -3)),
    (".0001k", dec(100, -3)),
    ("1.", dec(1, 0)),
    ("1.G", dec(1, 9)),
]


@pytest.mark.parametrize(
    ("text", "expected"),
    [pytest.param(t, e, id=f"TestQuantityParse/{t}") for t, e in PARSE_TABLE],
)
def test_parse_matches_upstream_table(text: str, expected: Fraction) -> None:
    assert parse_quantity(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [pytest.param(t, e, id=f"TestQuantityParse/negative {t}") for t, e in PARSE_TABLE],
)
def test_negated_input_parses_to_negated_value(text: str, expected: Fraction) -> None:
    assert parse_quantity("-" + text) == -expected
    assert parse_quantity("+" + text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param("", ERR_FORMAT_WRONG, id="TestQuantityParse/empty string"),
        pytest.param("1.1.M", ERR_FORMAT_WRONG, id="TestQuantityParse/1.1.M"),
        pytest.param("1+1.0M", ERR_FORMAT_WRONG, id="TestQuantityParse/1+1.0M"),
        pytest.param("0.1mi", ERR_SUFFIX, id="TestQuantityParse/0.1mi"),
        pytest.param("0.1am", ERR_FORMAT_WRONG, id="TestQuantityParse/0.1am"),
        pytest.param("aoeu", ERR_FORMAT_WRONG, id="TestQuantityParse/aoeu"),
        pytest.param(".5i", ERR_SUFFIX, id="TestQuantityParse/.5i"),
        pytest.param("1i", ERR_SUFFIX, id="TestQuantityParse/1i"),
        pytest.param("-3.01i", ERR_SUFFIX, id="TestQuantityParse/-3.01i"),
        pytest.param("-3.01e-", ERR_SUFFIX, id="TestQuantityParse/-3.01e-"),
        pytest.param(" 1", ERR_FORMAT_WRONG, id="TestQuantityParse/leading whitespace"),
        pytest.param("1 ", ERR_FORMAT_WRONG, id="TestQuantityParse/trailing whitespace"),
        pytest.param("1.2.3", ERR_FORMAT_WRONG, id="two decimal points"),
        pytest.param("5i", ERR_SUFFIX, id="i alone is no suffix"),
        pytest.param("1Ki1", ERR_SUFFIX, id="digits after a binary suffix"),
        pytest.param("1e", ERR_SUFFIX, id="lower-case e without exponent"),
        pytest.param("1e+", ERR_SUFFIX, id="exponent sign without digits"),
        pytest.param("1ee3", ERR_SUFFIX, id="doubled exponent marker"),
        pytest.param("1e9223372036854775808", ERR_SUFFIX, id="exponent beyond int64"),
        pytest.param("1Mi ", ERR_FORMAT_WRONG, id="suffix then space"),
        pytest.param("1\n", ERR_FORMAT_WRONG, id="trailing newline"),
        pytest.param("\u0663", ERR_FORMAT_WRONG, id="non-ASCII digit"),
        pytest.param("1\u00b5", ERR_FORMAT_WRONG, id="micro sign is not u"),
        pytest.param("1_000", ERR_FORMAT_WRONG, id="underscore separators"),
        pytest.param("e-10", ERR_NUMERIC, id="no digits on the slow path"),
        pytest.param(".e-10", ERR_NUMERIC, id="a lone dot on the slow path"),
        pytest.param("Ei", ERR_NUMERIC, id="Ei without a number"),
        pytest.param("-Pi", ERR_NUMERIC, id="Pi without a number"),
        pytest.param(".Pi", ERR_NUMERIC, id="a dot with Pi"),
        pytest.param("1e1000", ERR_TOO_LARGE, id="10^1000 is our parse bound"),
        pytest.param("1" * 1001, ERR_TOO_LARGE, id="a thousand-and-one digits"),
        pytest.param("1e2147483647", ERR_TOO_LARGE, id="huge exponent is rejected fast"),
        pytest.param("1e-2147483648", ERR_TOO_LARGE, id="MinInt32 exponent wraps to huge"),
        pytest.param("1.5e-2147483647", ERR_TOO_LARGE, id="scale arithmetic wraps to huge"),
    ],
)
def test_rejects_what_upstream_rejects_with_its_message(text: str, message: str) -> None:
    with pytest.raises(QuantityError) as err:
        parse_quantity(text)
    assert str(err.value) == message


def test_format_wrong_message_quotes_upstream_regexp() -> None:
    assert ERR_FORMAT_WRONG == (
        "quantities must match the regular expression "
        "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("-", F(0), id="a lone minus is zero (parseQuantityString)"),
        pytest.param("+", F(0), id="a lone plus is zero"),
        pytest.param(".", F(0), id="TestParseQuantityString/a lone dot is zero"),
        pytest.param("-.", F(0), id="TestParseQuantityString/minus dot is zero"),
        pytest.param("-000", F(0), id="signed zeros"),
        pytest.param("e3", F(0), id="empty number with exponent is zero"),
        pytest.param("Ki", F(0), id="empty number with Ki is zero"),
        pytest.param("Ti", F(0), id="empty number with Ti stays on the fast path"),
        pytest.param("0Ei", F(0), id="zero Ei has a digit"),
        pytest.param("0e-10", F(0), id="zero with tiny exponent"),
        pytest.param("1E", F(10**18), id="upper-case E alone is exa"),
        pytest.param("1e4294967297", F(10), id="v1.36 narrows the exponent to int32"),
        pytest.param("1e0003", F(1000), id="exponent with leading zeros"),
        pytest.param("007", F(7), id="leading zeros"),
        pytest.param("0.1m", F(1, 10000), id="fraction of a milli"),
        pytest.param("1e-7466", dec(1, -9), id="tiny value rounds up to 1n"),
        pytest.param("-.484785E-7466", -dec(1, -9), id="TestNegativeValueRoundsAwayFromZero/tiny"),
        pytest.param("99999999999999999999m", F(99999999999999999999, 1000), id="20 digits"),
        pytest.param("9223372036854775807", F(MAX_INT64), id="max int64 (19 digits)"),
        pytest.param("100Ei", F(MAX_INT64), id="binary capped at 2^63-1"),
        pytest.param("1" * 30 + "Ki", F(MAX_INT64), id="long binary capped at 2^63-1"),
        pytest.param("10E", F(10**19), id="decimal above int64 parses as upstream"),
        pytest.param("9223372036854775808", F(2**63), id="2^63 parses as upstream"),
        pytest.param("1e999", F(10**999), id="just below our parse bound"),
        pytest.param("0." + "0" * 5000 + "1", dec(1, -9), id="5000 digits round up to 1n"),
        pytest.param("1" * 5000 + "e-4990", F(int("1" * 19)) / 10**9 + F(1, 10**9), id="long"),
    ],
)
def test_upstream_quirks_are_kept(text: str, expected: Fraction) -> None:
    assert parse_quantity(text) == expected


@pytest.mark.parametrize(
    ("text", "expect_value", "expect_milli"),
    [
        pytest.param(t, v, m, id=f"TestNegativeValueRoundsAwayFromZero/{t}")
        for t, v, m in [
            ("-.484785E-7466", -1, -1),
            (".484785E-7466", 1, 1),
            ("-.484785E-1", -1, -49),
            (".484785E-1", 1, 49),
            ("-0.0005", -1, -1),
            ("0.0005", 1, 1),
            ("-1500m", -2, -1500),
            ("1500m", 2, 1500),
            ("-9.5000000001Gi", -10200547329, -10200547328108),
            ("9.5000000001Gi", 10200547329, 10200547328108),
            ("-1", -1, -1000),
            ("1", 1, 1000),
            ("0", 0, 0),
        ]
    ],
)
def test_value_and_milli_value_round_away_from_zero(
    text: str, expect_value: int, expect_milli: int
) -> None:
    q = parse_quantity(text)
    assert value(q) == expect_value
    assert milli_value(q) == expect_milli


@pytest.mark.parametrize(
    ("resource", "text", "expected"),
    [
        pytest.param("cpu", "100m", 100, id="cpu in milli"),
        pytest.param("cpu", "1.5", 1500, id="fractional cores"),
        pytest.param("cpu", "0.1m", 1, id="sub-milli cpu rounds up to 1m"),
        pytest.param("cpu", 2, 2000, id="YAML int cores"),
        pytest.param("cpu", 0.25, 250, id="YAML float cores"),
        pytest.param("memory", "2Gi", 2 * GI, id="memory in bytes"),
        pytest.param("memory", "500M", 500_000_000, id="decimal mega"),
        pytest.param("memory", "1.5", 2, id="fractional bytes round up"),
        pytest.param("memory", "1e3", 1000, id="exponent form"),
        pytest.param("pods", "110", 110, id="pod count"),
        pytest.param("example.com/gpu", "1", 1, id="extended resource"),
        pytest.param("memory", " 1Gi\t", GI, id="UnmarshalJSON trims whitespace"),
        pytest.param("memory", None, 0, id="null is zero"),
    ],
)
def test_scheduler_amount(resource: str, text: str | int | float | None, expected: int) -> None:
    assert scheduler_amount(resource, text) == expected


def test_trimming_uses_go_whitespace_only() -> None:
    # U+001F is whitespace to Python's strip() but not to Go's TrimSpace.
    assert parse_quantity_json("\u00a01\u3000") == 1
    with pytest.raises(QuantityError):
        parse_quantity_json("1\x1f")


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(True, id="YAML true is the JSON literal true"),
        pytest.param(float("inf"), id="infinity"),
        pytest.param(float("nan"), id="nan"),
    ],
)
def test_non_numbers_from_yaml_are_rejected(raw: bool | float) -> None:
    with pytest.raises(QuantityError, match="regular expression"):
        parse_quantity(raw)


def test_large_yaml_numbers() -> None:
    assert parse_quantity(1e16) == 10**16
    assert parse_quantity(2**63) == 2**63
    assert parse_quantity(1e300) == 10**300
    with pytest.raises(QuantityError, match="too large"):
        parse_quantity(10**1000)


@pytest.mark.parametrize(
    ("text", "milli_fits", "value_fits"),
    [
        pytest.param("9223372036854775807", False, True, id="max int64 has no milli value"),
        pytest.param("9223372036854775807m", True, True, id="max int64 milli"),
        pytest.param("9223372036854775808m", False, True, id="one milli past"),
        pytest.param("12E", False, False, id="TestQuantityParse/12E has no int64 value"),
        pytest.param("-9223372036854775808", False, True, id="min int64 value fits"),
        pytest.param("9Ei", False, True, id="capped binary has a value but no milli"),
    ],
)
def test_accessors_raise_outside_int64(text: str, milli_fits: bool, value_fits: bool) -> None:
    q = parse_quantity(text)
    for fits, accessor in ((milli_fits, milli_value), (value_fits, value)):
        if fits:
            assert accessor(q) in range(-(2**63), 2**63)
        else:
            with pytest.raises(QuantityError) as err:
                accessor(q)
            assert str(err.value) == ERR_OUT_OF_RANGE


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        pytest.param("1Ki", "1Ki", id="TestQuantityParseEmit/1Ki"),
        pytest.param("1Gi", "1Gi", id="TestQuantityParseEmit/1Gi"),
        pytest.param("1024Mi", "1Gi", id="TestQuantityParseEmit/1024Mi"),
        pytest.param("1025", "1025", id="TestQuantityString/1025 stays plain"),
        pytest.param("300Mi", "300Mi", id="TestQuantityString/300Mi"),
    ],
)
def test_format_bytes_matches_canonical_binary_form(text: str, canonical: str) -> None:
    assert format_bytes(value(parse_quantity(text))) == canonical


@pytest.mark.parametrize(
    ("milli", "canonical"),
    [
        pytest.param(1, "1m", id="TestMilliNewSet/1m"),
        pytest.param(1000, "1", id="TestMilliNewSet/1"),
        pytest.param(1234000, "1234", id="TestMilliNewSet/1234"),
        pytest.param(1500, "1500m", id="fractional cores print in milli"),
        pytest.param(0, "0", id="zero"),
    ],
)
def test_format_milli_cpu(milli: int, canonical: str) -> None:
    assert format_milli_cpu(milli) == canonical


# --------------------------------------------------------------------------- properties

BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}


@given(st.integers(0, 10**6), st.sampled_from(sorted(BINARY)))
def test_binary_suffixes_scale_by_powers_of_two(n: int, suffix: str) -> None:
    expected = min(n * 2 ** BINARY[suffix], MAX_INT64)
    assert parse_quantity(f"{n}{suffix}") == expected
    assert parse_quantity(f"-{n}{suffix}") == -expected


@given(st.integers(0, 10**6), st.sampled_from(sorted(DECIMAL)))
def test_decimal_suffixes_scale_by_powers_of_ten(n: int, suffix: str) -> None:
    expected = F(n) * F(10) ** DECIMAL[suffix]
    assert parse_quantity(f"{n}{suffix}") == expected
    assert parse_quantity(f"{n}e{DECIMAL[suffix]}") == expected


@given(st.integers(0, 10**9), st.integers(0, 9), st.integers(-12, 9))
def test_decimal_point_and_exponent_agree(whole: int, frac_digits: int, exp: int) -> None:
    digits = str(whole)
    if frac_digits:
        text = f"{digits[:-1] or '0'}.{digits[-1]}{'0' * (frac_digits - 1)}e{exp}"
        exact = F(int(digits[:-1] or "0") * 10 + int(digits[-1]), 10) * F(10) ** exp
    else:
        text = f"{digits}e{exp}"
        exact = F(whole) * F(10) ** exp
    got = parse_quantity(text)
    # Rounded away from zero to a whole number of nanos, never below the exact value.
    assert got >= exact
    assert got - exact < F(1, 10**9)
    assert (got * 10**9).denominator == 1


@given(st.integers(0, 10**15))
def test_format_milli_cpu_round_trips(milli: int) -> None:
    assert milli_value(parse_quantity(format_milli_cpu(milli))) == milli


@given(st.integers(0, MAX_INT64))
def test_format_bytes_round_trips(n: int) -> None:
    assert value(parse_quantity(format_bytes(n))) == n


@given(st.fractions(min_value=0, max_value=10**12))
def test_milli_value_is_the_ceiling(q: Fraction) -> None:
    m = milli_value(q)
    assert q * 1000 <= m < q * 1000 + 1
    v = value(q)
    assert q <= v < q + 1


@given(st.fractions(min_value=-(10**12), max_value=10**12))
def test_accessors_are_symmetric_under_negation(q: Fraction) -> None:
    assert milli_value(-q) == -milli_value(q)
    assert value(-q) == -value(q)


@given(st.floats(min_value=0, max_value=1e15, allow_nan=False))
def test_yaml_floats_parse_to_their_shortest_decimal(x: float) -> None:
    got = parse_quantity(x)
    assert got >= F(repr(x)) and got - F(repr(x)) < F(1, 10**9)


QUANTITY_ALPHABET = "0123456789.+-eEinumkKMGTP xÅ٣_"


@given(st.text(alphabet=QUANTITY_ALPHABET, max_size=12) | st.text(max_size=8))
def test_random_strings_parse_or_raise_quantity_error(text: str) -> None:
    try:
        got = parse_quantity(text)
    except QuantityError as err:
        assert str(err) in {ERR_FORMAT_WRONG, ERR_NUMERIC, ERR_SUFFIX, ERR_TOO_LARGE}
    else:
        assert abs(got) < F(10) ** 1000
        assert (got * 10**9).denominator == 1


# --------------------------------------------------------------------------- String()


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        # Quantity.String(): CanonicalizeBytes in the format the suffix chose.
        pytest.param("1000m", "1", id="TestQuantityParseEmit/1000m"),
        pytest.param("1000k", "1M", id="TestQuantityParseEmit/1000k"),
        pytest.param("1024Ki", "1Mi", id="TestQuantityParseEmit/1024Ki"),
        pytest.param("1536Mi", "1536Mi", id="TestQuantityParseEmit/1536Mi"),
        pytest.param("1.5Gi", "1536Mi", id="a fractional binary amount"),
        pytest.param("0.5Ki", "512", id="under 1024: DecimalSI"),
        pytest.param("1.5", "1500m", id="a decimal fraction goes to milli"),
        pytest.param("1000", "1k", id="1000 is 1k"),
        pytest.param("1e3", "1e3", id="DecimalExponent keeps its format"),
        pytest.param("5e-3", "5e-3", id="a negative exponent"),
        pytest.param("0.000000001", "1n", id="nano"),
        pytest.param("12345678", "12345678", id="no power of 1000"),
        pytest.param(2, "2", id="a JSON number"),
        pytest.param(0.25, "250m", id="a JSON float"),
        pytest.param("0", "0", id="zero"),
        pytest.param(" 2 ", "2", id="trimmed as UnmarshalJSON trims"),
    ],
)
def test_canonical_string(text: str | int | float, canonical: str) -> None:
    assert canonical_string(text) == canonical
