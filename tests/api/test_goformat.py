"""Go's formatting and integer arithmetic (api/goformat.py).

Expected values follow Go's documented behaviour: ``strconv.Quote`` escapes
what ``unicode.IsPrint`` rejects (``\\a \\b \\f \\n \\r \\t \\v`` by name,
other bytes below 0x80 as ``\\xNN``, other runes as ``\\uNNNN`` /
``\\UNNNNNNNN``); the time package's ``quote`` escapes every byte of a rune
>= 0x80 or < 0x20 as ``\\xNN`` and nothing else but ``"`` and ``\\``; ``%#v``
of a nil ``[]string`` is ``[]string(nil)``; ``utilerrors.aggregate.Error()``
drops repeated messages; ``/`` truncates toward zero; ``math.Round`` rounds
halves away from zero.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.api.goformat import (
    go_aggregate,
    go_div,
    go_div_vec,
    go_list,
    go_quote,
    go_round,
    go_round_vec,
    go_string_slice,
    time_quote,
)


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param('a"b\\c', '"a\\"b\\\\c"', id="quote-and-backslash"),
        pytest.param("tab\there\n", '"tab\\there\\n"', id="named-escapes"),
        pytest.param("\a\b\f\r\v", '"\\a\\b\\f\\r\\v"', id="all-named-escapes"),
        pytest.param("\x01\x7f", '"\\x01\\x7f"', id="ascii-controls-as-hex"),
        pytest.param("\u00e9 \u4e16", '"\u00e9 \u4e16"', id="printable-unicode-kept"),
        pytest.param("\u00a0\u2028", '"\\u00a0\\u2028"', id="non-printable-unicode-as-u"),
        pytest.param("\U000e0001", '"\\U000e0001"', id="non-printable-astral-as-U"),
        pytest.param("", '""', id="empty"),
    ],
)
def test_go_quote_is_strconv_quote(text: str, want: str) -> None:
    assert go_quote(text) == want


@pytest.mark.parametrize(
    ("text", "want"),
    [
        pytest.param('1"d\\', '"1\\"d\\\\"', id="quote-and-backslash"),
        pytest.param("\u00b5s", '"\\xc2\\xb5s"', id="utf8-bytes-as-hex"),
        pytest.param("\t\x7f", '"\\x09\x7f"', id="below-space-as-hex-del-kept"),
    ],
)
def test_time_quote_is_the_time_packages_quote(text: str, want: str) -> None:
    assert time_quote(text) == want


@pytest.mark.parametrize(
    ("values", "want"),
    [
        pytest.param(None, "[]string(nil)", id="nil"),
        pytest.param((), "[]string{}", id="empty"),
        pytest.param(("a", "b\n"), '[]string{"a", "b\\n"}', id="quoted-items"),
    ],
)
def test_go_string_slice_is_sharp_v(values: tuple[str, ...] | None, want: str) -> None:
    assert go_string_slice(values) == want


def test_go_list_is_percent_v() -> None:
    assert go_list(["NodeAffinity", "TaintToleration"]) == "[NodeAffinity TaintToleration]"
    assert go_list([]) == "[]"


@pytest.mark.parametrize(
    ("messages", "want"),
    [
        pytest.param(["a"], "a", id="one"),
        pytest.param(["a", "a"], "a", id="one-distinct"),
        pytest.param(["a", "b", "a", "c"], "[a, b, c]", id="several-first-seen-order"),
    ],
)
def test_go_aggregate(messages: list[str], want: str) -> None:
    assert go_aggregate(messages) == want


@pytest.mark.parametrize(
    ("a", "b", "want"),
    [
        pytest.param(7, 2, 3, id="positive"),
        pytest.param(-7, 2, -3, id="negative-dividend-truncates-up"),
        pytest.param(7, -2, -3, id="negative-divisor"),
        pytest.param(-7, -2, 3, id="both-negative"),
        pytest.param(-1, 3, 0, id="toward-zero"),
    ],
)
def test_go_div_truncates_toward_zero(a: int, b: int, want: int) -> None:
    assert go_div(a, b) == want
    assert go_div_vec(np.array([a], dtype=np.int64), b).tolist() == [want]
    assert go_div_vec(np.array([a], dtype=np.int64), np.array([b])).tolist() == [want]


@pytest.mark.parametrize(
    ("x", "want"),
    [
        pytest.param(0.5, 1, id="half-up"),
        pytest.param(-0.5, -1, id="half-away-from-zero"),
        pytest.param(2.5, 3, id="not-banker"),
        pytest.param(-2.5, -3, id="negative-half"),
        pytest.param(2.4999, 2, id="below-half"),
        pytest.param(0.49999999999999994, 0, id="largest-below-half"),
        pytest.param(-0.49999999999999994, 0, id="negative-largest-below-half"),
        pytest.param(1e15 + 0.5, 1_000_000_000_000_001, id="large"),
    ],
)
def test_go_round_is_math_round(x: float, want: int) -> None:
    assert go_round(x) == want
    assert go_round_vec(np.array([x])).tolist() == [want]


@given(st.lists(st.floats(min_value=-1e15, max_value=1e15, allow_nan=False), max_size=8))
def test_go_round_vec_agrees_with_go_round(xs: list[float]) -> None:
    # Mixed signs and all non-negative arrays take different branches.
    assert go_round_vec(np.array(xs, dtype=np.float64)).tolist() == [go_round(x) for x in xs]
    nonneg = [abs(x) for x in xs]
    assert go_round_vec(np.array(nonneg, dtype=np.float64)).tolist() == [
        go_round(x) for x in nonneg
    ]


@given(
    st.integers(min_value=-(2**62), max_value=2**62),
    st.integers(min_value=-(2**31), max_value=2**31).filter(bool),
)
def test_go_div_vec_agrees_with_go_div(a: int, b: int) -> None:
    assert go_div_vec(np.array([a], dtype=np.int64), b).tolist() == [go_div(a, b)]
