"""YAML and JSON text to plain values, on ordinary and hostile input (api/parsing.py).

(Syntax errors, repeated keys and non-mapping documents through ``read_documents``
are in test_load.py's ``test_read_errors``.)

Ordinary YAML must come out as PyYAML's own safe loader builds it (timestamps
left as strings, as Kubernetes reads them): PyYAML is the reference for YAML 1.1
resolution, anchors, merge keys and the standard tags. Hostile YAML must be
refused the way go-yaml (kubectl, the API server) refuses it, with one line
naming where.
"""

from __future__ import annotations

from typing import Any

import pytest
import yaml

from kubesched.api.errors import InputError
from kubesched.api.parsing import (
    EXCESSIVE_ALIASING,
    MAX_NESTING,
    JSONValueError,
    _allowed_alias_ratio,
    parse_json_stream,
    parse_yaml,
)


class _Reference(yaml.SafeLoader):
    """PyYAML's pure-Python safe loader, without the implicit timestamp type."""


_Reference.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def reference(text: str) -> list[Any]:
    return list(yaml.load_all(text, Loader=_Reference))


def error(text: str) -> str:
    with pytest.raises(InputError) as exc:
        parse_yaml(text, "in.yaml")
    assert exc.value.source == "in.yaml"
    assert "\n" not in str(exc.value)
    return exc.value.message


ORDINARY = [
    pytest.param("kind: Pod\nmetadata: {name: a}\n", id="block and flow"),
    pytest.param("---\n---\nkind: Node\n---\n", id="empty documents are None"),
    pytest.param("a: yes\nb: 'yes'\nc: 0x1F\nd: 1_000\ne: 1.5\nf: ~\ng: 1:30\n", id="YAML 1.1"),
    pytest.param("t: 2024-01-02T03:04:05Z\nd: 2024-01-02\n", id="timestamps stay strings"),
    pytest.param("t: !!timestamp 2024-01-02T03:04:05Z\n", id="an explicit timestamp tag"),
    pytest.param("a: &x {k: v}\nb: *x\nc: &s str\nd: *s\n", id="anchors and aliases"),
    pytest.param(
        "base: &b {cpu: '1', memory: 1Gi}\nother: &o {cpu: '2', pods: 3}\n"
        "m: {<<: [*b, *o], memory: 2Gi}\n",
        id="merge keys: own keys win, then the earlier merged mapping",
    ),
    pytest.param("m: {<<: {a: 1}, <<: {a: 2, b: 3}}\n", id="two merge keys"),
    pytest.param("m: {'<<': 1}\n", id="a quoted merge key is a key"),
    pytest.param("s: !!set {a, b}\no: !!omap [{a: 1}, {b: 2}]\n", id="set and omap"),
    pytest.param("i: !!int '7'\nf: !!float '2'\nb: !!binary aGk=\n", id="explicit scalar tags"),
    pytest.param("s: !!str 1\nq: ! 1\nn: !!null ''\n", id="explicit string and null tags"),
    pytest.param("? a\n: 1\n1: one\nfalse: no\n", id="non-string keys"),
    pytest.param("a: |\n  two\n  lines\nb: >-\n  folded\n  text\n", id="block scalars"),
    pytest.param("- a\n- [b, {c: d}]\n", id="a sequence document"),
    pytest.param("just text\n", id="a scalar document"),
    pytest.param("\ufeffkind: Node\n", id="a byte order mark"),
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_yaml_is_built_as_pyyaml_builds_it(text: str) -> None:
    if text.lstrip("\ufeff").startswith("- "):
        with pytest.raises(InputError, match="expected a mapping at the top level, got list"):
            parse_yaml(text, "in.yaml")
        return
    assert parse_yaml(text, "in.yaml") == reference(text)


def test_a_merge_key_out_of_place_is_a_string() -> None:
    # PyYAML refuses ``<<`` as a value; go-yaml reads it as the string "<<".
    assert parse_yaml("n: [<<]\nv: <<\n", "in.yaml") == [{"n": ["<<"], "v": "<<"}]


def test_aliases_share_the_anchored_value() -> None:
    (doc,) = parse_yaml("a: &x {k: [1]}\nb: *x\n", "in.yaml")
    assert doc["a"] is doc["b"]


def test_nesting_up_to_the_limit_is_accepted() -> None:
    lists = MAX_NESTING - 1  # under the top-level mapping
    (doc,) = parse_yaml("a: " + "[" * lists + "]" * lists, "in.yaml")
    value = doc["a"]
    for _ in range(lists - 1):
        value = value[0]
    assert value == []


@pytest.mark.parametrize(
    ("text", "where"),
    [
        # The mapping is level 1; the 512th "[" (column 3 + 512) opens level 513.
        pytest.param(
            "a: " + "[" * MAX_NESTING + "]" * MAX_NESTING, "line 1, column 515", id="flow"
        ),
        pytest.param(
            "".join(" " * i + "k:\n" for i in range(MAX_NESTING + 1)),
            "line 513, column 513",
            id="block",
        ),
        pytest.param("a: " + "[" * 100_000, "line 1, column 515", id="100,000 levels (a crash)"),
    ],
)
def test_deeper_nesting_is_refused_where_it_goes_too_deep(text: str, where: str) -> None:
    assert error(text) == f"malformed YAML: {where}: nested more than 512 levels deep"


def laughs(levels: int, width: int) -> str:
    """The billion laughs: each level an anchored list of ``width`` aliases to the
    previous one, so the last expands to ``width ** levels`` strings."""
    lines = ["l0: &l0 [" + ", ".join(["lol"] * width) + "]"]
    for i in range(1, levels):
        lines.append(f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize(
    ("levels", "width"),
    [
        pytest.param(9, 9, id="billion laughs, 9 x 9"),
        pytest.param(30, 2, id="a deep doubling chain"),
        pytest.param(3, 200, id="wide and shallow"),
    ],
)
def test_alias_bombs_are_refused_like_go_yaml(levels: int, width: int) -> None:
    assert error(laughs(levels, width)).endswith(EXCESSIVE_ALIASING)


def test_moderate_aliasing_is_fine() -> None:
    # 3 levels of 9: 819 decoded nodes, under go-yaml's minimum of 1000.
    (doc,) = parse_yaml(laughs(3, 9), "in.yaml")
    assert len(doc["l2"]) == 9 and doc["l2"][0] is doc["l1"]


@pytest.mark.parametrize(
    ("decoded", "ratio"),
    [
        pytest.param(1000, 0.99, id="small documents: 99%"),
        pytest.param(400_000, 0.99, id="up to 400,000 nodes"),
        pytest.param(2_200_000, 0.99 - 0.89 * 0.5, id="halfway"),
        pytest.param(4_000_000, 0.10, id="from 4,000,000 nodes: 10%"),
    ],
)
def test_allowed_alias_ratio_is_go_yamls(decoded: int, ratio: float) -> None:
    # go-yaml decode.go allowedAliasRatio.
    assert _allowed_alias_ratio(decoded) == pytest.approx(ratio)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        pytest.param(
            "? [a]\n: 1\n",
            "malformed YAML: line 1, column 3: found unhashable key",
            id="unhashable",
        ),
        pytest.param(
            "a: *nope\n",
            "malformed YAML: line 1, column 4: found undefined alias 'nope'",
            id="alias",
        ),
        pytest.param(
            "a: &x [1, *x]\n",
            "malformed YAML: line 1, column 11: anchor 'x' value contains itself",
            id="a value containing itself",
        ),
        pytest.param(
            "a: !foo 1\n",
            "malformed YAML: line 1, column 4: could not determine a constructor for the tag "
            "'!foo'",
            id="an unknown tag",
        ),
        pytest.param(
            "a: !!python/object:os.system [x]\n",
            "malformed YAML: line 1, column 4: could not determine a constructor for the tag "
            "'tag:yaml.org,2002:python/object:os.system'",
            id="a python tag",
        ),
        pytest.param(
            "a: .nan\n",
            "malformed YAML: line 1, column 4: NaN is not a number JSON can carry",
            id="NaN",
        ),
        pytest.param(
            "a: [-.inf]\n",
            "malformed YAML: line 1, column 5: infinity is not a number JSON can carry",
            id="infinity",
        ),
        pytest.param(
            "a: 1.0e+999\n",
            "malformed YAML: line 1, column 4: infinity is not a number JSON can carry",
            id="a float out of range",
        ),
        pytest.param(
            "a: " + "9" * 5000 + "\n",
            "malformed YAML: line 1, column 4: integer has more than 4300 digits",
            id="a 5,000-digit integer",
        ),
        pytest.param(
            "m: {<<: [1]}\n",
            "malformed YAML: line 1, column 5: expected a mapping or list of mappings for "
            "merging, but found int",
            id="merging a scalar",
        ),
        pytest.param(
            "a: b\n\tc: d\n",
            "malformed YAML: line 2, column 1: found a tab character that violates indentation",
            id="a tab",
        ),
    ],
)
def test_yaml_errors(text: str, message: str) -> None:
    assert error(text) == message


def test_a_4000_digit_integer_is_a_number() -> None:
    (doc,) = parse_yaml("a: " + "9" * 4000 + "\n", "in.yaml")
    assert doc["a"] == int("9" * 4000)


# --------------------------------------------------------------------------- JSON


def json_error(text: str) -> InputError:
    with pytest.raises(InputError) as exc:
        parse_json_stream(text, "in.json")
    assert exc.value.source == "in.json"
    return exc.value


def test_json_stream_of_values() -> None:
    assert parse_json_stream('{"a": 1} {"b": [2.5, null]}\n', "in.json") == [
        {"a": 1},
        {"b": [2.5, None]},
    ]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        # The API server's strict decoding: duplicate field "kind".
        pytest.param(
            '{"kind": "Pod", "kind": "Node"}', 'duplicate field "kind"', id="a repeated key"
        ),
        pytest.param('{"a": {"b": 1, "b": 2}}', 'duplicate field "b"', id="a repeated inner key"),
        # Go's encoding/json has no NaN or Infinity literals and refuses 1e999.
        pytest.param('{"a": NaN}', "NaN is not a number JSON can carry", id="NaN"),
        pytest.param('{"a": -Infinity}', "infinity is not a number JSON can carry", id="infinity"),
        pytest.param('{"a": 1e999}', "number 1e999 is out of range", id="out of float range"),
        pytest.param(
            '{"a": ' + "9" * 5000 + "}", "integer has more than 4300 digits", id="5,000 digits"
        ),
    ],
)
def test_json_values_go_refuses(text: str, message: str) -> None:
    err = json_error(text)
    assert isinstance(err, JSONValueError)  # well-formed JSON: not re-read as YAML
    assert err.message == f"malformed JSON: {message}"


@pytest.mark.parametrize("depth", [100_000, MAX_NESTING + 20])
def test_deep_json_is_refused(depth: int) -> None:
    text = '{"a": ' + "[" * depth + "]" * depth + "}"
    assert json_error(text).message == "malformed JSON: nested more than 512 levels deep"


def test_json_nesting_well_under_the_limit_is_accepted() -> None:
    depth = MAX_NESTING - 20
    (doc,) = parse_json_stream("[" * depth + "]" * depth, "in.json")
    assert isinstance(doc, list)
