"""The configuration's strict decoding (scheduler/config/decode.py): the reader kit
of api/reader.py under the STRICT policy.

Expected messages are Go's: ``encoding/json``'s ``UnmarshalTypeError``
(``cannot unmarshal <JSON type> into Go value of type <Go type>``, a number
shown with its value) without the ``json: `` prefix, and the API machinery's
strict decoding error ``strict decoding error: unknown field "x"``, where the
field name is printed with ``%q`` (``strconv.Quote``: control characters
escaped, ``\\x01``, ``\\u00a0``).
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from kubesched.api.errors import InputError
from kubesched.scheduler.config import parse_config
from kubesched.scheduler.config.decode import (
    INT64,
    as_int,
    as_mapping,
    check_fields,
    get_bool,
    get_int,
    get_list,
    get_mapping,
    get_str,
    get_str_list,
    get_str_map,
)
from kubesched.scheduler.config.field_errors import ConfigError

API = "kubescheduler.config.k8s.io/v1"
KIND = "KubeSchedulerConfiguration"


@pytest.mark.parametrize(
    ("read", "path", "body"),
    [
        pytest.param(
            lambda: check_fields({"a": 1, "b": 2}, "x", ("a",)),
            "x.b",
            'strict decoding error: unknown field "b"',
            id="unknown-field",
        ),
        pytest.param(
            lambda: as_mapping(None, "profiles[0]"),
            "profiles[0]",
            "cannot unmarshal NoneType into Go value of type struct",
            id="null-item-is-not-a-struct",
        ),
        pytest.param(
            lambda: as_mapping([], "p"),
            "p",
            "cannot unmarshal array into Go value of type struct",
            id="array-for-struct",
        ),
        pytest.param(
            lambda: get_mapping({"m": "x"}, "m", "p"),
            "p.m",
            "cannot unmarshal string into Go value of type struct",
            id="string-for-struct",
        ),
        pytest.param(
            lambda: get_list({"l": {}}, "l", ""),
            "l",
            "cannot unmarshal object into Go value of type slice",
            id="object-for-slice",
        ),
        pytest.param(
            lambda: get_int({"w": True}, "w", "p"),
            "p.w",
            "cannot unmarshal bool into Go value of type int32",
            id="bool-for-int32",
        ),
        pytest.param(
            lambda: get_int({"w": 1.0}, "w", "p"),
            "p.w",
            "cannot unmarshal number 1.0 into Go value of type int32",
            id="float-for-int32",
        ),
        pytest.param(
            lambda: as_int(2**63, "n", INT64),
            "n",
            "cannot unmarshal number 9223372036854775808 into Go value of type int64",
            id="int64-range",
        ),
        pytest.param(
            lambda: get_bool({"b": "true"}, "b", ""),
            "b",
            "cannot unmarshal string into Go value of type bool",
            id="string-for-bool",
        ),
        pytest.param(
            lambda: get_str_list({"v": ["a", 1]}, "v", "p"),
            "p.v[1]",
            "cannot unmarshal number into Go value of type string",
            id="string-list-item",
        ),
        pytest.param(
            lambda: get_str_map({"m": {"k": None}}, "m", "p"),
            "p.m.k",
            "cannot unmarshal NoneType into Go value of type string",
            id="string-map-null-value",
        ),
    ],
)
def test_strict_decoding_errors(read: Callable[[], object], path: str, body: str) -> None:
    with pytest.raises(ConfigError) as info:
        read()
    assert (info.value.error.path, info.value.error.body) == (path, body)


def test_absent_and_null_read_as_none() -> None:
    raw = {"n": None}
    assert get_int(raw, "n", "") is None
    assert get_str(raw, "missing", "") is None
    assert get_list(raw, "n", "") is None
    assert get_str_list(raw, "n", "") is None
    assert get_mapping(raw, "n", "") is None


@pytest.mark.parametrize(
    ("field", "shown"),
    [
        pytest.param("bad\x01", '"bad\\x01"', id="control-character"),
        pytest.param("bad\u00a0", '"bad\\u00a0"', id="non-printable-space"),
        pytest.param("caf\u00e9", '"caf\u00e9"', id="printable-unicode"),
    ],
)
def test_unknown_field_names_are_quoted_like_go(field: str, shown: str) -> None:
    with pytest.raises(InputError) as info:
        parse_config({"apiVersion": API, "kind": KIND, field: 1})
    assert info.value.message == f"strict decoding error: unknown field {shown}"
