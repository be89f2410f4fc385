"""``api.convert.pod.pod_spec_reusing``: a pod's update with the same spec (but
for ``nodeName``) keeps the converted ``PodSpec``; any other change converts again."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from kubesched.api.convert.pod import SpecFields, convert_pod, pod_spec, pod_spec_reusing
from kubesched.api.errors import InputError


def same(a: SpecFields, b: SpecFields) -> bool:
    """Equal conversions (a PodSpec compares by identity: its repr shows every field)."""
    return repr(a) == repr(b)


def raw_spec(**extra: Any) -> dict[str, Any]:
    return {
        "containers": [{"name": "c", "image": "x", "resources": {"requests": {"cpu": "1"}}}],
        "tolerations": [{"key": "k", "operator": "Exists"}],
        **extra,
    }


def test_same_spec_and_a_bound_copy_reuse_the_converted_spec() -> None:
    spec = raw_spec()
    fields = pod_spec(spec, "spec")
    assert pod_spec_reusing(copy.deepcopy(spec), (spec, fields)) is fields
    bound = pod_spec_reusing(raw_spec(nodeName="n1"), (spec, fields))
    assert bound.spec is fields.spec and bound.node_name == "n1"
    assert same(bound, pod_spec(raw_spec(nodeName="n1"), "spec"))


@pytest.mark.parametrize(
    "changed",
    [
        raw_spec(priorityClassName="high"),
        raw_spec(nodeSelector={"a": "b"}),
        {**raw_spec(), "containers": [{"name": "c", "image": "x"}]},
    ],
)
def test_any_other_change_converts_again(changed: dict[str, Any]) -> None:
    spec = raw_spec()
    fields = pod_spec(spec, "spec")
    got = pod_spec_reusing(changed, (spec, fields))
    assert got.spec is not fields.spec
    assert same(got, pod_spec(changed, "spec"))


def test_bad_input_is_still_an_error() -> None:
    spec = raw_spec()
    fields = pod_spec(spec, "spec")
    with pytest.raises(InputError, match="nodeName"):
        pod_spec_reusing(raw_spec(nodeName=5), (spec, fields))


def test_convert_pod_takes_the_fields() -> None:
    raw = {"metadata": {"name": "p", "namespace": "d", "uid": "u"}, "spec": raw_spec()}
    fields = pod_spec(raw["spec"], "spec")
    pod, _, _ = convert_pod(raw, fields)
    assert pod.spec is fields.spec
    assert repr(convert_pod(raw)[0].spec) == repr(fields.spec)
