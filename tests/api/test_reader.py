"""The reader kit (api/reader.py): one structure, the wording from a policy.

The ``INPUT`` policy's messages are kubesched's own for input objects
(``expected a string, got 5``; containers by type, scalars by value); the JSON
path rules are apimachinery's ``field.Path`` (``a.b``, ``a[0]``, a map entry
``labels[k]``). The strict policy of the scheduler configuration is tested with
it in tests/scheduler/test_config_decode.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from kubesched.api import reader
from kubesched.api.errors import InputError
from kubesched.api.reader import Reader, ReadPolicy


def _error(read: Callable[[], object]) -> tuple[str | None, str]:
    with pytest.raises(InputError) as info:
        read()
    return info.value.field, info.value.message


@pytest.mark.parametrize(
    ("read", "field", "message"),
    [
        pytest.param(
            lambda: reader.get_str({"name": 5}, "name", "metadata"),
            "metadata.name",
            "expected a string, got 5",
            id="string-got-integer",
        ),
        pytest.param(
            lambda: reader.get_map({"spec": [1]}, "spec", ""),
            "spec",
            "expected a mapping, got list",
            id="mapping-got-list-at-top",
        ),
        pytest.param(
            lambda: reader.get_list({"ports": "80"}, "ports", "spec.containers[0]"),
            "spec.containers[0].ports",
            "expected a list, got string",
            id="list-got-string",
        ),
        pytest.param(
            lambda: reader.get_bool({"hostNetwork": "yes"}, "hostNetwork", "spec"),
            "spec.hostNetwork",
            'expected a boolean, got "yes"',
            id="boolean-got-string",
        ),
        pytest.param(
            lambda: reader.get_int({"weight": 1.5}, "weight", "p", bits=32),
            "p.weight",
            "expected an integer, got 1.5",
            id="integer-got-fraction",
        ),
        pytest.param(
            lambda: reader.get_int({"weight": 2**31}, "weight", "p", bits=32),
            "p.weight",
            "expected a 32-bit integer, got 2147483648",
            id="int32-out-of-range",
        ),
        pytest.param(
            lambda: reader.get_int({"n": -(2**63) - 1}, "n", ""),
            "n",
            "expected a 64-bit integer, got -9223372036854775809",
            id="int64-out-of-range",
        ),
        pytest.param(
            lambda: reader.get_str_list({"values": ["a", None]}, "values", "m"),
            "m.values[1]",
            "expected a string, got null",
            id="list-item-path",
        ),
        pytest.param(
            lambda: reader.get_str_map({"labels": {"a": 1}}, "labels", "metadata"),
            "metadata.labels[a]",
            "expected a string, got 1",
            id="map-entry-path",
        ),
        pytest.param(
            lambda: reader.get_str_map({"labels": {1: "a"}}, "labels", "metadata"),
            "metadata.labels",
            "expected string keys, got 1",
            id="map-key-not-string",
        ),
        pytest.param(
            lambda: reader.map_list({"c": [{}, 3]}, "c", "spec", lambda r, p: r),
            "spec.c[1]",
            "expected a mapping, got integer",
            id="map-list-item",
        ),
        pytest.param(
            lambda: reader.req_str({"name": ""}, "name", "metadata"),
            "metadata.name",
            "Required value",
            id="required-empty",
        ),
        pytest.param(
            lambda: reader.opt_enum({"p": ""}, "p", "spec", ("A", "B")),
            "spec.p",
            "Required value",
            id="enum-present-but-empty",
        ),
        pytest.param(
            lambda: reader.opt_enum({"p": "C"}, "p", "spec", ("A", "B")),
            "spec.p",
            'Unsupported value: "C": supported values: "A", "B"',
            id="enum-unsupported",
        ),
    ],
)
def test_input_policy_errors(read: Callable[[], object], field: str, message: str) -> None:
    assert _error(read) == (field, message)


@pytest.mark.parametrize(
    ("read", "want"),
    [
        pytest.param(lambda: reader.get_str({"a": None}, "a", "", "d"), "d", id="null-is-default"),
        pytest.param(lambda: reader.get_map({}, "a", ""), {}, id="absent-map-is-empty"),
        pytest.param(lambda: reader.get_list({"a": None}, "a", ""), (), id="null-list-is-empty"),
        pytest.param(lambda: reader.get_int({"a": 3.0}, "a", ""), 3, id="integral-float"),
        pytest.param(lambda: reader.opt_int({}, "a", ""), None, id="absent-int-is-none"),
        pytest.param(
            lambda: reader.get_str_map({"l": {"k": None}}, "l", ""), {"k": ""}, id="null-value"
        ),
        pytest.param(
            lambda: reader.get_str({"x": 1, "y": "ok"}, "y", ""), "ok", id="unknown-ignored"
        ),
    ],
)
def test_input_policy_values(read: Callable[[], object], want: object) -> None:
    assert read() == want


class _Problem(Exception):
    pass


def _raise(path: str, message: str) -> Exception:
    return _Problem(f"{path}|{message}")


_TEST_POLICY = ReadPolicy(
    fail=_raise,
    wrong_type=lambda value, go_type: f"not {go_type}",
    bad_number=lambda value, go_type: f"{value} too big for {go_type}",
    integral_floats=False,
    unknown_field=lambda key: f"unknown {key}",
)


@pytest.mark.parametrize(
    ("read", "want"),
    [
        pytest.param(
            lambda r: r.check_fields({"a": 1, "b": 2}, "spec", ("a",)),
            "spec.b|unknown b",
            id="unknown-field-rejected",
        ),
        pytest.param(lambda r: r.as_map(None, "x", null_ok=False), "x|not struct", id="null-map"),
        pytest.param(lambda r: r.opt_list({"l": {}}, "l", "p"), "p.l|not slice", id="slice"),
        pytest.param(lambda r: r.opt_bool({"b": 1}, "b", ""), "b|not bool", id="bool"),
        pytest.param(lambda r: r.as_int(3.0, "n", 32), "n|3.0 too big for int32", id="float"),
        pytest.param(lambda r: r.as_int("3", "n", 64), "n|not int64", id="int-got-string"),
        pytest.param(
            lambda r: r.as_int(2**63, "n", 64),
            "n|9223372036854775808 too big for int64",
            id="int64-range",
        ),
    ],
)
def test_policy_words_what_the_reader_finds(read: Callable[[Reader], Any], want: str) -> None:
    """The structure (paths, which check fails) is the Reader's; only the words and
    the exception come from the policy."""
    with pytest.raises(_Problem) as info:
        read(Reader(_TEST_POLICY))
    assert str(info.value) == want


def test_input_policy_ignores_unknown_fields() -> None:
    Reader(reader.INPUT).check_fields({"anything": 1}, "spec", ())
