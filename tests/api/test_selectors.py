"""Label / node selector matching and validation against upstream's semantics."""

from __future__ import annotations

import re
from collections.abc import Mapping

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kubesched.api.selectors import (
    compile_label_selector,
    label_key_errors,
    label_selector_matches,
    label_selector_parse_error,
    label_value_errors,
    match_node_selector_map,
    node_selector_matches,
    node_selector_term_errors,
    node_selector_term_matches,
    parse_int64_label,
)
from kubesched.api.types import (
    LabelSelector,
    LabelSelectorRequirement,
    NodeSelector,
    NodeSelectorRequirement,
    NodeSelectorTerm,
)

LR = LabelSelectorRequirement
NR = NodeSelectorRequirement

KEY_DETAIL = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start "
    "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', "
    "regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
VALUE_DETAIL = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
SUBDOMAIN_DETAIL = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex "
    "used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)


def term(*exprs: NodeSelectorRequirement, fields: tuple[NR, ...] = ()) -> NodeSelectorTerm:
    return NodeSelectorTerm(match_expressions=exprs, match_fields=fields)


def name_in(*names: str) -> NR:
    return NR("metadata.name", "In", names)


# --------------------------------------------------------------------------- int64 labels


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("0", 0, id="zero"),
        pytest.param("0206", 206, id="leading zeros (TestPodMatchesNodeSelectorAndAffinityTerms)"),
        pytest.param("+5", 5, id="explicit plus"),
        pytest.param("-5", -5, id="minus"),
        pytest.param("9223372036854775807", 2**63 - 1, id="max int64"),
        pytest.param("-9223372036854775808", -(2**63), id="min int64"),
        pytest.param("9223372036854775808", None, id="past max int64"),
        pytest.param("", None, id="empty"),
        pytest.param("+", None, id="sign only"),
        pytest.param(" 5", None, id="leading space"),
        pytest.param("5 ", None, id="trailing space"),
        pytest.param("1_000", None, id="underscore"),
        pytest.param("\u0663", None, id="arabic-indic digit"),
        pytest.param("0x10", None, id="hex"),
        pytest.param("1.0", None, id="decimal point"),
        pytest.param("--5", None, id="double sign"),
    ],
)
def test_parse_int64_label_is_strconv_parse_int(text: str, expected: int | None) -> None:
    assert parse_int64_label(text) == expected


_PARSE_INT_RE = re.compile(r"[+-]?[0-9]+")


@given(st.text(alphabet="0123456789+- _\u0663a", max_size=22))
def test_parse_int64_label_agrees_with_a_reference(text: str) -> None:
    if _PARSE_INT_RE.fullmatch(text) and -(2**63) <= int(text) < 2**63:
        assert parse_int64_label(text) == int(text)
    else:
        assert parse_int64_label(text) is None


@given(st.integers(-(2**63), 2**63 - 1))
def test_parse_int64_label_round_trips_int64(n: int) -> None:
    assert parse_int64_label(str(n)) == n


# --------------------------------------------------------------------------- requirements


@pytest.mark.parametrize(
    ("req", "labels", "expected"),
    [
        pytest.param(NR("k", "In", ("a", "b")), {"k": "b"}, True, id="In matches a listed value"),
        pytest.param(NR("k", "In", ("a",)), {"k": "c"}, False, id="In rejects other values"),
        pytest.param(NR("k", "In", ("a",)), {}, False, id="In needs the key"),
        pytest.param(NR("k", "NotIn", ("a",)), {}, True, id="NotIn matches an absent key"),
        pytest.param(NR("k", "NotIn", ("a",)), {"k": "a"}, False, id="NotIn rejects listed"),
        pytest.param(NR("k", "NotIn", ("a",)), {"k": "b"}, True, id="NotIn accepts others"),
        pytest.param(NR("k", "Exists"), {"k": ""}, True, id="Exists with an empty value"),
        pytest.param(NR("k", "Exists"), {}, False, id="Exists needs the key"),
        pytest.param(NR("k", "DoesNotExist"), {}, True, id="DoesNotExist on absence"),
        pytest.param(NR("k", "DoesNotExist"), {"k": "x"}, False, id="DoesNotExist on presence"),
        pytest.param(
            NR("kernel-version", "Gt", ("0204",)),
            {"kernel-version": "0206"},
            True,
            id="TestPodMatchesNodeSelectorAndAffinityTerms/Gt operator matches",
        ),
        pytest.param(NR("k", "Gt", ("5",)), {"k": "5"}, False, id="Gt is strict"),
        pytest.param(NR("k", "Lt", ("5",)), {"k": "4"}, True, id="Lt matches smaller"),
        pytest.param(NR("k", "Lt", ("5",)), {"k": "-9"}, True, id="Lt with a negative label"),
        pytest.param(NR("k", "Lt", ("5",)), {"k": "5"}, False, id="Lt is strict"),
        pytest.param(NR("k", "Gt", ("1",)), {}, False, id="Gt needs the key"),
        pytest.param(NR("k", "Gt", ("1",)), {"k": "abc"}, False, id="Gt non-integer label"),
        pytest.param(NR("k", "Gt", ("1",)), {"k": " 2"}, False, id="Gt label with space"),
        pytest.param(NR("k", "Gt", ("1",)), {"k": "2.5"}, False, id="Gt decimal label"),
        pytest.param(NR("k", "Gt", ("1", "2")), {"k": "9"}, False, id="Gt with two values"),
        pytest.param(NR("k", "Gt", ()), {"k": "9"}, False, id="Gt with no value"),
        pytest.param(NR("k", "Gt", ("x",)), {"k": "9"}, False, id="Gt non-integer value"),
        pytest.param(
            NR("k", "Gt", ("9223372036854775806",)),
            {"k": "9223372036854775807"},
            True,
            id="Gt at the int64 edge",
        ),
        pytest.param(
            NR("k", "Lt", ("0",)),
            {"k": "-9223372036854775809"},
            False,
            id="label below int64 does not parse",
        ),
        pytest.param(NR("k", "Foo", ("a",)), {"k": "a"}, False, id="unknown operator"),
    ],
)
def test_node_selector_requirement_matches(
    req: NodeSelectorRequirement, labels: Mapping[str, str], expected: bool
) -> None:
    assert node_selector_term_matches(term(req), "n", labels) is expected


# --------------------------------------------------------------------------- node selectors

FIELD_AND_LABEL = term(NR("label_1", "In", ("label_1_val",)), fields=(name_in("host_1"),))


@pytest.mark.parametrize(
    ("selector", "node_name", "labels", "expected"),
    [
        pytest.param(
            NodeSelector((FIELD_AND_LABEL,)),
            "host_1",
            {},
            False,
            id="TestNodeSelectorMatch/node matches field selector, but not labels",
        ),
        pytest.param(
            NodeSelector((FIELD_AND_LABEL,)),
            "host_1",
            {"label_1": "label_1_val"},
            True,
            id="TestNodeSelectorMatch/node matches field selector and label selector",
        ),
        pytest.param(
            NodeSelector(
                (term(NR("label_1", "In", ("label_1_val",))), term(fields=(name_in("host_1"),)))
            ),
            "host_1",
            {},
            True,
            id="TestNodeSelectorMatch/second term matches",
        ),
        pytest.param(
            NodeSelector(
                (
                    term(fields=(NR("metadata.name", "In", ("host_1", "host_2")),)),
                    FIELD_AND_LABEL,
                    term(NR("invalid key", "In", ("label_value",))),
                )
            ),
            "host_1",
            {"label_1": "label_1_val"},
            True,
            id="TestNodeSelectorMatch/invalid terms are skipped, the valid one matches",
        ),
        pytest.param(
            NodeSelector(()),
            "n",
            {"foo": "bar"},
            False,
            id="TestPodMatchesNodeSelectorAndAffinityTerms/empty NodeSelectorTerms",
        ),
        pytest.param(
            NodeSelector((term(),)),
            "n",
            {"foo": "bar"},
            False,
            id="TestPodMatchesNodeSelectorAndAffinityTerms/empty MatchExpressions match nothing",
        ),
        pytest.param(
            NodeSelector((term(NR("foo", "In", ("value1", "value2"))),)),
            "",
            {"foo": "bar"},
            False,
            id="TestPodMatchesNodeSelectorAndAffinityTerms/affinity does not match labels",
        ),
        pytest.param(
            NodeSelector((term(NR("GPU", "Exists"), NR("GPU", "NotIn", ("AMD", "INTER"))),)),
            "",
            {"GPU": "NVIDIA-GRID-K1"},
            True,
            id="TestPodMatchesNodeSelectorAndAffinityTerms/multiple matchExpressions ANDed match",
        ),
        pytest.param(
            NodeSelector((term(NR("GPU", "Exists"), NR("GPU", "In", ("AMD", "INTER"))),)),
            "",
            {"GPU": "NVIDIA-GRID-K1"},
            False,
            id="TestPodMatchesNodeSelectorAndAffinityTerms/multiple matchExpressions ANDed fail",
        ),
        pytest.param(
            NodeSelector(
                (
                    term(NR("foo", "In", ("bar", "value2"))),
                    term(NR("diffkey", "In", ("wrong", "value2"))),
                )
            ),
            "",
            {"foo": "bar"},
            True,
            id="TestPodMatchesNodeSelectorAndAffinityTerms/multiple terms ORed",
        ),
        pytest.param(
            NodeSelector((term(NR("foo", "NotIn", ("invalid value: ___@#$%^",))),)),
            "",
            {"foo": "bar"},
            False,
            id="TestPodMatchesNodeSelectorAndAffinityTerms/invalid value in term",
        ),
        pytest.param(
            NodeSelector((term(fields=(name_in("node_1"),)),)),
            "node_1",
            {},
            True,
            id="TestPodMatchesNodeSelectorAndAffinityTerms/matchFields In matches",
        ),
        pytest.param(
            NodeSelector((term(fields=(name_in("node_1"),)),)),
            "node_2",
            {},
            False,
            id="TestPodMatchesNodeSelectorAndAffinityTerms/matchFields In does not match",
        ),
        pytest.param(
            NodeSelector((term(fields=(name_in("node_1"),)), term(NR("foo", "In", ("bar",))))),
            "node_2",
            {"foo": "bar"},
            True,
            id="TestPodMatchesNodeSelectorAndAffinityTerms/two terms: expressions match",
        ),
        pytest.param(
            NodeSelector((term(NR("foo", "In", ("bar",)), fields=(name_in("node_1"),)),)),
            "node_2",
            {"foo": "bar"},
            False,
            id="TestPodMatchesNodeSelectorAndAffinityTerms/one term: fields do not match",
        ),
        pytest.param(
            NodeSelector((term(NR("foo", "In", ("bar",)), fields=(name_in("node_1"),)),)),
            "node_1",
            {"foo": "bar"},
            True,
            id="TestPodMatchesNodeSelectorAndAffinityTerms/one term: both match",
        ),
        pytest.param(
            NodeSelector((term(fields=(NR("metadata.name", "NotIn", ("node_1",)),)),)),
            "node_2",
            {},
            True,
            id="matchFields NotIn",
        ),
        pytest.param(
            NodeSelector((term(fields=(NR("metadata.uid", "In", ("node_1",)),)),)),
            "node_1",
            {},
            False,
            id="a field other than metadata.name reads as empty",
        ),
        pytest.param(
            NodeSelector((term(fields=(name_in("node_1"),)),)),
            "",
            {},
            True,
            id="matchFields are skipped for a node without a name",
        ),
        pytest.param(
            NodeSelector((term(fields=(NR("metadata.name", "Exists"),)),)),
            "node_1",
            {},
            False,
            id="matchFields Exists fails to parse",
        ),
        pytest.param(
            NodeSelector((term(NR("k", "Gt", ("-1",))),)),
            "",
            {"k": "5"},
            False,
            id="Gt value -1 is not a valid label value so the term fails to parse",
        ),
        pytest.param(
            NodeSelector((term(NR("k", "Gt", ("1", "2"))),)),
            "",
            {"k": "5"},
            False,
            id="Gt with two values fails to parse",
        ),
        pytest.param(
            NodeSelector((term(NR("k", "Exists", ("x",))),)),
            "",
            {"k": "5"},
            False,
            id="Exists with values fails to parse",
        ),
        pytest.param(
            NodeSelector((term(NR("k", "In", ())),)),
            "",
            {"k": "5"},
            False,
            id="In without values fails to parse",
        ),
        pytest.param(
            NodeSelector((term(NR("k", "Foo", ("5",))),)),
            "",
            {"k": "5"},
            False,
            id="unknown operator fails to parse",
        ),
    ],
)
def test_node_selector_matches(
    selector: NodeSelector, node_name: str, labels: Mapping[str, str], expected: bool
) -> None:
    assert node_selector_matches(selector, node_name, labels) is expected


def test_invalid_terms_report_upstream_field_errors() -> None:
    # TestNodeSelectorMatch/invalid field selector and label selector.
    terms = (
        term(fields=(NR("metadata.name", "In", ("host_1", "host_2")),)),
        FIELD_AND_LABEL,
        term(NR("invalid key", "In", ("label_value",))),
    )
    errors = [
        e
        for i, t in enumerate(terms)
        for e in node_selector_term_errors(t, f"nodeSelectorTerms[{i}]")
    ]
    assert errors == [
        'nodeSelectorTerms[0].matchFields[0].values: Invalid value: []string{"host_1", "host_2"}: '
        "must have one element",
        f'nodeSelectorTerms[2].matchExpressions[0].key: Invalid value: "invalid key": {KEY_DETAIL}',
    ]


@pytest.mark.parametrize(
    ("req", "expected"),
    [
        pytest.param(
            NR("foo", "Exists", ("bar", "baz")),
            [
                'root.matchExpressions[0].values: Invalid value: []string{"bar", "baz"}: '
                "values set must be empty for exists and does not exist"
            ],
            id="TestNodeSelectorRequirementsAsSelector/Exists with values",
        ),
        pytest.param(
            NR("foo", "Gt", ("1",)), [], id="TestNodeSelectorRequirementsAsSelector/foo>1"
        ),
        pytest.param(
            NR("bar", "Lt", ("7",)), [], id="TestNodeSelectorRequirementsAsSelector/bar<7"
        ),
        pytest.param(
            NR("foo", "In", ("bar", "baz")), [], id="TestNodeSelectorRequirementsAsSelector/in"
        ),
        pytest.param(
            NR("foo", "In", ()),
            [
                "root.matchExpressions[0].values: Invalid value: []string(nil): "
                "for 'in', 'notin' operators, values set can't be empty"
            ],
            id="In without values",
        ),
        pytest.param(
            NR("foo", "Gt", ("x",)),
            [
                'root.matchExpressions[0].values[0]: Invalid value: "x": '
                "for 'Gt', 'Lt' operators, the value must be an integer"
            ],
            id="Gt with a non-integer",
        ),
        pytest.param(
            NR("foo", "Lt", ("1", "2")),
            [
                'root.matchExpressions[0].values: Invalid value: []string{"1", "2"}: '
                "for 'Gt', 'Lt' operators, exactly one value is required"
            ],
            id="Lt with two values",
        ),
        pytest.param(
            NR("foo", "Gt", ("-1",)),
            [f'root.matchExpressions[0].values[0][foo]: Invalid value: "-1": {VALUE_DETAIL}'],
            id="Gt with a negative number is an invalid label value",
        ),
        pytest.param(
            NR("foo", "Near", ("1",)),
            [
                'root.matchExpressions[0].operator: Unsupported value: "Near": supported values: '
                '"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"'
            ],
            id="unsupported operator",
        ),
    ],
)
def test_node_selector_term_errors(req: NodeSelectorRequirement, expected: list[str]) -> None:
    assert node_selector_term_errors(term(req), "root") == expected


def test_unsupported_field_operator_message() -> None:
    t = term(fields=(NR("metadata.name", "Exists"),))
    assert node_selector_term_errors(t) == [
        'matchFields[0].operator: Unsupported value: "Exists": supported values: "In", "NotIn"'
    ]


@pytest.mark.parametrize(
    ("weights_and_terms", "node_name", "labels", "score"),
    [
        pytest.param(
            [
                (5, term(fields=(name_in("host_1"),))),
                (7, term(NR("unknown_label", "In", ("unknown_label_val",)))),
                (11, term(NR("label_1", "In", ("label_1_val",)))),
            ],
            "host_1",
            {"label_1": "label_1_val"},
            16,
            id="TestPreferredSchedulingTermsScore/first and third term match",
        ),
        pytest.param(
            [(0, term(fields=(NR("metadata.name", "In", ("host_1", "host_2")),)))],
            "host_1",
            {},
            0,
            id="TestPreferredSchedulingTermsScore/invalid field selector but no weight",
        ),
    ],
)
def test_preferred_terms_score_is_the_sum_of_matching_weights(
    weights_and_terms: list[tuple[int, NodeSelectorTerm]],
    node_name: str,
    labels: Mapping[str, str],
    score: int,
) -> None:
    got = sum(
        w for w, t in weights_and_terms if w and node_selector_term_matches(t, node_name, labels)
    )
    assert got == score


@pytest.mark.parametrize(
    ("node_selector", "affinity", "labels", "expected"),
    [
        pytest.param(
            {}, None, {}, True, id="TestPodMatchesNodeSelectorAndAffinityTerms/no selector"
        ),
        pytest.param(
            {"foo": "bar"},
            None,
            {},
            False,
            id="TestPodMatchesNodeSelectorAndAffinityTerms/missing labels",
        ),
        pytest.param(
            {"foo": "bar"},
            None,
            {"foo": "bar"},
            True,
            id="TestPodMatchesNodeSelectorAndAffinityTerms/same labels",
        ),
        pytest.param(
            {"foo": "bar"},
            None,
            {"foo": "bar", "baz": "blah"},
            True,
            id="TestPodMatchesNodeSelectorAndAffinityTerms/node labels are superset",
        ),
        pytest.param(
            {"foo": "bar", "baz": "blah"},
            None,
            {"foo": "bar"},
            False,
            id="TestPodMatchesNodeSelectorAndAffinityTerms/node labels are subset",
        ),
        pytest.param(
            {"foo": "bar"},
            NodeSelector((term(NR("foo", "Exists")),)),
            {"foo": "bar"},
            True,
            id="TestPodMatchesNodeSelectorAndAffinityTerms/affinity and nodeSelector satisfied",
        ),
        pytest.param(
            {"foo": "bar"},
            NodeSelector((term(NR("foo", "Exists")),)),
            {"foo": "barrrrrr"},
            False,
            id="TestPodMatchesNodeSelectorAndAffinityTerms/nodeSelector not satisfied",
        ),
        pytest.param(
            {"foo": ""}, None, {}, False, id="an empty selector value still needs the key"
        ),
    ],
)
def test_node_selector_map_and_required_affinity(
    node_selector: Mapping[str, str],
    affinity: NodeSelector | None,
    labels: Mapping[str, str],
    expected: bool,
) -> None:
    # RequiredNodeAffinity.Match: spec.nodeSelector, then the required node selector.
    got = match_node_selector_map(node_selector, labels) and (
        affinity is None or node_selector_matches(affinity, "", labels)
    )
    assert got is expected


# --------------------------------------------------------------------------- label selectors


@pytest.mark.parametrize(
    ("selector", "labels", "expected"),
    [
        pytest.param(None, {"a": "b"}, False, id="nil selector selects nothing"),
        pytest.param(LabelSelector(), {}, True, id="empty selector selects everything"),
        pytest.param(
            LabelSelector({"a": "b"}), {"a": "b", "c": "d"}, True, id="matchLabels subset"
        ),
        pytest.param(LabelSelector({"a": "b"}), {"a": "x"}, False, id="matchLabels wrong value"),
        pytest.param(LabelSelector({"a": ""}), {}, False, id="matchLabels empty value needs key"),
        pytest.param(
            LabelSelector({"a": "b"}, (LR("c", "In", ("d",)),)),
            {"a": "b", "c": "e"},
            False,
            id="matchLabels ANDed with matchExpressions",
        ),
        pytest.param(
            LabelSelector(match_expressions=(LR("c", "NotIn", ("d",)),)),
            {},
            True,
            id="NotIn matches an absent key",
        ),
        pytest.param(
            LabelSelector(match_expressions=(LR("c", "DoesNotExist"),)),
            {},
            True,
            id="DoesNotExist matches an absent key",
        ),
        pytest.param(
            LabelSelector(match_expressions=(LR("c", "Exists"), LR("c", "NotIn", ("x",)))),
            {"c": "y"},
            True,
            id="Exists and NotIn together",
        ),
        pytest.param(
            LabelSelector(match_expressions=(LR("c", "Gt", ("1",)),)),
            {"c": "2"},
            True,
            id="Gt evaluates literally (invalid in a label selector)",
        ),
        pytest.param(
            LabelSelector(match_expressions=(LR("c", "Bogus", ("1",)),)),
            {"c": "1"},
            False,
            id="unknown operator matches nothing",
        ),
    ],
)
def test_label_selector_matches(
    selector: LabelSelector | None, labels: Mapping[str, str], expected: bool
) -> None:
    assert label_selector_matches(selector, labels) is expected
    assert compile_label_selector(selector)(labels) is expected


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        pytest.param(None, None, id="nil"),
        pytest.param(LabelSelector({"app": "web"}), None, id="valid"),
        pytest.param(
            LabelSelector(match_expressions=(LR("app", "Near", ("x",)),)),
            '"Near" is not a valid pod selector operator',
            id="TestLabelSelectorAsSelector/unknown operator",
        ),
        pytest.param(
            LabelSelector({"bad key": "v"}),
            f'key: Invalid value: "bad key": {KEY_DETAIL}',
            id="invalid matchLabels key",
        ),
        pytest.param(
            LabelSelector({"k": "bad value"}),
            f'values[0][k]: Invalid value: "bad value": {VALUE_DETAIL}',
            id="invalid matchLabels value",
        ),
        pytest.param(
            LabelSelector(match_expressions=(LR("k", "In", ()),)),
            "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set "
            "can't be empty",
            id="In without values",
        ),
        pytest.param(
            LabelSelector(match_expressions=(LR("bad key", "Exists", ("x",)),)),
            f'[key: Invalid value: "bad key": {KEY_DETAIL}, values: Invalid value: '
            '[]string{"x"}: values set must be empty for exists and does not exist]',
            id="two errors of one requirement aggregate",
        ),
    ],
)
def test_label_selector_parse_error(selector: LabelSelector | None, expected: str | None) -> None:
    assert label_selector_parse_error(selector) == expected


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        pytest.param("app", [], id="plain name"),
        pytest.param("kubernetes.io/hostname", [], id="prefixed name"),
        pytest.param("Example.com/x", ["prefix part " + SUBDOMAIN_DETAIL], id="64-character name"),
        pytest.param(
            "app\n",
            ["name part " + KEY_DETAIL[len("name part ") :]],
            id="trailing newline is invalid",
        ),
    ],
)
def test_label_key_errors(key: str, expected: list[str]) -> None:
    assert label_key_errors(key) == expected


def test_label_value_rules() -> None:
    assert label_value_errors("") == []
    assert label_value_errors("a" * 63) == []
    assert label_value_errors("a" * 64) == ["must be no more than 63 characters"]
    assert label_value_errors("x\n") == [VALUE_DETAIL]


# --------------------------------------------------------------------------- properties

KEYS = ("a", "b", "c")
VALUES = ("x", "y", "1", "2", "-3", "")
label_sets = st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=3)
value_lists = st.lists(st.sampled_from(VALUES), max_size=3).map(tuple)
label_requirements = st.builds(
    LR,
    st.sampled_from(KEYS),
    st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist")),
    value_lists,
)
label_selectors = st.builds(
    LabelSelector,
    st.dictionaries(st.sampled_from(KEYS), st.sampled_from(VALUES), max_size=2),
    st.lists(label_requirements, max_size=3).map(tuple),
)


def reference_label_match(sel: LabelSelector, labels: Mapping[str, str]) -> bool:
    """A naive evaluator written from the API documentation."""
    ok = True
    for k, v in sel.match_labels.items():
        ok = ok and k in labels and labels[k] == v
    for r in sel.match_expressions:
        present = r.key in labels
        listed = present and labels[r.key] in set(r.values)
        ok = (
            ok
            and {
                "In": listed,
                "NotIn": not listed,
                "Exists": present,
                "DoesNotExist": not present,
            }[r.operator]
        )
    return ok


@given(label_selectors, label_sets)
def test_label_selector_equals_reference(sel: LabelSelector, labels: dict[str, str]) -> None:
    expected = reference_label_match(sel, labels)
    assert label_selector_matches(sel, labels) is expected
    assert compile_label_selector(sel)(labels) is expected


node_requirements = st.builds(
    NR,
    st.sampled_from(KEYS),
    st.sampled_from(("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")),
    value_lists,
)
node_terms = st.builds(
    NodeSelectorTerm,
    st.lists(node_requirements, max_size=3).map(tuple),
    st.lists(
        st.builds(NR, st.just("metadata.name"), st.sampled_from(("In", "NotIn")), value_lists),
        max_size=1,
    ).map(tuple),
)


def reference_term_match(t: NodeSelectorTerm, node_name: str, labels: Mapping[str, str]) -> bool:
    if not t.match_expressions and not t.match_fields:
        return False
    for r in t.match_expressions:
        # Validity, from the documented rules.
        if r.operator in ("In", "NotIn") and not r.values:
            return False
        if r.operator in ("Exists", "DoesNotExist") and r.values:
            return False
        if r.operator in ("Gt", "Lt") and (len(r.values) != 1 or not r.values[0].isdigit()):
            return False  # "-3" is an integer but not a valid label value
        if any(v.startswith("-") for v in r.values):
            return False
    if any(len(f.values) != 1 for f in t.match_fields):
        return False
    for r in t.match_expressions:
        have = labels.get(r.key)
        if r.operator == "In" and (have is None or have not in r.values):
            return False
        if r.operator == "NotIn" and have is not None and have in r.values:
            return False
        if r.operator == "Exists" and have is None:
            return False
        if r.operator == "DoesNotExist" and have is not None:
            return False
        if r.operator in ("Gt", "Lt"):
            if have is None or not re.fullmatch(r"-?[0-9]+", have):
                return False
            a, b = int(have), int(r.values[0])
            if (r.operator == "Gt" and not a > b) or (r.operator == "Lt" and not a < b):
                return False
    if node_name:
        for f in t.match_fields:
            if (f.operator == "In") != (node_name == f.values[0]):
                return False
    return True


@given(st.lists(node_terms, max_size=3), st.sampled_from(("", "n1", "x")), label_sets)
def test_node_selector_equals_reference(
    terms: list[NodeSelectorTerm], node_name: str, labels: dict[str, str]
) -> None:
    expected = any(reference_term_match(t, node_name, labels) for t in terms)
    assert node_selector_matches(NodeSelector(tuple(terms)), node_name, labels) is expected
