"""``parse_selector_text``: kubectl's ``-l`` grammar, checked by rendering random
requirements as text and comparing what the parsed selector matches with a
direct evaluation of the requirements."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kubesched.api.selector_text import parse_selector_text
from kubesched.api.selectors import label_selector_matches
from tests.hypothesis_profiles import scaled

KEYS = st.sampled_from(["app", "tier", "example.com/env", "a-b.c_d"])
VALUES = st.sampled_from(["web", "db", "a", "x.y-z", ""])
REQ = st.tuples(
    KEYS,
    st.sampled_from(["=", "==", "!=", "in", "notin", "exists", "!"]),
    st.lists(VALUES.filter(bool), min_size=1, max_size=3),
)


def render(req: tuple[str, str, list[str]], spaces: bool) -> str:
    key, op, values = req
    sp = " " if spaces else ""
    if op in ("=", "==", "!="):
        return f"{key}{sp}{op}{sp}{values[0]}"
    if op in ("in", "notin"):
        return f"{key} {op} ({f',{sp}'.join(values)})"
    return key if op == "exists" else f"!{key}"


def holds(req: tuple[str, str, list[str]], labels: dict[str, str]) -> bool:
    key, op, values = req
    if op in ("=", "=="):
        return labels.get(key) == values[0]
    if op == "!=":
        return labels.get(key) != values[0]
    if op == "in":
        return key in labels and labels[key] in values
    if op == "notin":
        return key not in labels or labels[key] not in values
    return (key in labels) == (op == "exists")


@settings(max_examples=scaled(300))
@given(
    reqs=st.lists(REQ, min_size=1, max_size=4),
    labels=st.dictionaries(KEYS, VALUES, max_size=4),
    spaces=st.booleans(),
)
def test_parsed_selector_matches_as_the_requirements(
    reqs: list[tuple[str, str, list[str]]], labels: dict[str, str], spaces: bool
) -> None:
    text = (", " if spaces else ",").join(render(r, spaces) for r in reqs)
    sel = parse_selector_text(text)
    assert label_selector_matches(sel, labels) == all(holds(r, labels) for r in reqs), text


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("app in web", "unable to parse requirement: found 'app in web'"),
        ("=x", "unable to parse requirement"),
        ("a=b,,c", "unable to parse requirement: found ',c'"),
        ("a in ()", "a: empty value in ()"),
        ("-bad=x", "-bad: "),
        ("app=-x-", "app: "),
    ],
)
def test_bad_selectors_say_where(text: str, error: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_selector_text(text)
    assert str(err.value).startswith(error)
