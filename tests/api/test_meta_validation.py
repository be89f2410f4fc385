"""The API server's label, annotation and resource validation (api/meta_validation.py).

Expected messages are apimachinery's and pkg/apis/core/validation's texts:
``content.IsLabelKey`` / ``IsLabelValue`` (RegexError puts ``'x', `` before each
`` or ``, hence the double spaces), ``MaxLenError`` (``must be no more than N
bytes``), ``ValidateResourceRequirements`` (the request path is not keyed and the
values are ``Quantity.String()``).
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.api.errors import InputError
from kubesched.api.meta_validation import (
    label_value_errors,
    qualified_name_errors,
    validate_object,
)

KEY_REGEX = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with "
    "an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
VALUE_REGEX = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
SUBDOMAIN_REGEX = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
    "[a-z0-9])?)*')"
)


@pytest.mark.parametrize(
    "key",
    [
        "simple",
        "now-with-dashes",
        "1-starts-with-num",
        "1234",
        "simple/simple",
        "now-with-dashes/simple",
        "example.com/Upper_Case.name",
        "a" * 63,
        "b" * 253 + "/" + "c" * 63,
    ],
)
def test_good_qualified_names(key: str) -> None:
    # TestIsQualifiedName's good values.
    assert qualified_name_errors(key) == []


@pytest.mark.parametrize(
    ("key", "errors"),
    [
        pytest.param("bad key!", ["name part " + KEY_REGEX], id="TestIsQualifiedName/space"),
        pytest.param("nospecialchars%^=@", ["name part " + KEY_REGEX], id="special characters"),
        pytest.param("-dash", ["name part " + KEY_REGEX], id="a leading dash"),
        pytest.param("", ["name part must be non-empty", "name part " + KEY_REGEX], id="empty"),
        pytest.param("/a", ["prefix part must be non-empty"], id="an empty prefix"),
        pytest.param(
            "a/b/c",
            [
                "a valid label key " + KEY_REGEX + " with an optional DNS subdomain prefix and "
                "'/' (e.g. 'example.com/MyName')"
            ],
            id="two slashes",
        ),
        pytest.param(
            "Example.com/a", ["prefix part " + SUBDOMAIN_REGEX], id="an upper-case prefix"
        ),
        pytest.param("a" * 64, ["name part must be no more than 63 bytes"], id="64 bytes"),
        pytest.param("é", ["name part " + KEY_REGEX], id="not ASCII"),
        pytest.param(
            "x" * 254 + "/a",
            # The subdomain regex does not bound a label's length: only the size fails.
            ["prefix part must be no more than 253 bytes"],
            id="a 254-byte prefix",
        ),
        pytest.param("a\n", ["name part " + KEY_REGEX], id="a trailing newline (Go's $)"),
    ],
)
def test_bad_qualified_names(key: str, errors: list[str]) -> None:
    assert qualified_name_errors(key) == errors


@pytest.mark.parametrize(
    ("value", "errors"),
    [
        pytest.param("", [], id="TestIsValidLabelValue/empty"),
        pytest.param("a" * 63, [], id="63 bytes"),
        pytest.param("Upper_and.dots-1", [], id="every allowed character"),
        pytest.param("-x", [VALUE_REGEX], id="a leading dash"),
        pytest.param("a b", [VALUE_REGEX], id="a space"),
        pytest.param("a" * 64, ["must be no more than 63 bytes"], id="64 bytes"),
        pytest.param("é" * 32, ["must be no more than 63 bytes", VALUE_REGEX], id="64 UTF-8 bytes"),
    ],
)
def test_label_values(value: str, errors: list[str]) -> None:
    assert label_value_errors(value) == errors


def pod(**parts: Any) -> dict[str, Any]:
    container = {"name": "c", **parts.pop("container", {})}
    raw: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "a", **parts.pop("metadata", {})},
        "spec": {"containers": [container], **parts.pop("spec", {})},
    }
    return raw


def resources(requests: dict[str, Any] | None = None, limits: dict[str, Any] | None = None) -> Any:
    out: dict[str, Any] = {}
    if requests is not None:
        out["requests"] = requests
    if limits is not None:
        out["limits"] = limits
    return {"resources": out}


REQ = "spec.containers[0].resources.requests"
LIM = "spec.containers[0].resources.limits"

ERRORS = [
    pytest.param(
        pod(metadata={"labels": {"bad key!": "x"}}),
        "metadata.labels",
        'Invalid value: "bad key!": name part ' + KEY_REGEX,
        id="a label key",
    ),
    pytest.param(
        pod(metadata={"labels": {"app": "-web"}}),
        "metadata.labels",
        'Invalid value: "-web": ' + VALUE_REGEX,
        id="a label value",
    ),
    pytest.param(
        pod(metadata={"annotations": {"Example.com/A B": "x"}}),
        "metadata.annotations",
        'Invalid value: "Example.com/A B": name part ' + KEY_REGEX,
        id="an annotation key is shown as written",
    ),
    pytest.param(
        pod(metadata={"annotations": {"big": "x" * (256 * 1024)}}),
        "metadata.annotations",
        "Too long: must have at most 262144 bytes",
        id="annotations over 256 KiB",
    ),
    pytest.param(
        pod(spec={"nodeSelector": {"disk type": "ssd"}}),
        "spec.nodeSelector",
        'Invalid value: "disk type": name part ' + KEY_REGEX,
        id="a nodeSelector key",
    ),
    pytest.param(
        pod(container=resources({"cpu": "2"}, {"cpu": "1"})),
        REQ,
        'Invalid value: "2": must be less than or equal to cpu limit of 1',
        id="TestValidateResourceRequirements/cpu request over limit",
    ),
    pytest.param(
        pod(container=resources({"memory": "2048Mi"}, {"memory": "1.5Gi"})),
        REQ,
        # Quantity.String(): 2048Mi is 2Gi, 1.5Gi is 1536Mi.
        'Invalid value: "2Gi": must be less than or equal to memory limit of 1536Mi',
        id="canonical memory quantities",
    ),
    pytest.param(
        pod(container=resources({"cpu": "1.5"}, {"cpu": "1000m"})),
        REQ,
        'Invalid value: "1500m": must be less than or equal to cpu limit of 1',
        id="canonical cpu quantities",
    ),
    pytest.param(
        pod(container=resources({"ephemeral-storage": 2000}, {"ephemeral-storage": "1k"})),
        REQ,
        'Invalid value: "2k": must be less than or equal to ephemeral-storage limit of 1k',
        id="a number is a DecimalSI quantity",
    ),
    pytest.param(
        pod(container=resources({"example.com/gpu": "1"})),
        LIM,
        "Required value: Limit must be set for non overcommitable resources",
        id="an extended resource without a limit",
    ),
    pytest.param(
        pod(container=resources({"example.com/gpu": "1"}, {"example.com/gpu": "2"})),
        REQ,
        'Invalid value: "1": must be equal to example.com/gpu limit of 2',
        id="an extended resource under its limit",
    ),
    pytest.param(
        pod(container=resources(limits={"example.com/gpu": "0.5"})),
        LIM + ".example.com/gpu",
        'Invalid value: "500m": must be an integer',
        id="a fractional extended resource",
    ),
    pytest.param(
        pod(container=resources({"hugepages-2Mi": "2Mi", "memory": "1Gi"})),
        LIM,
        "Required value: Limit must be set for non overcommitable resources",
        id="hugepages without a limit",
    ),
    pytest.param(
        pod(spec={"initContainers": [{"name": "i", **resources({"cpu": "2"}, {"cpu": "1"})}]}),
        "spec.initContainers[0].resources.requests",
        'Invalid value: "2": must be less than or equal to cpu limit of 1',
        id="an init container",
    ),
    pytest.param(
        pod(container={"resources": {"claims": [{"name": "gpu"}]}}),
        "spec.containers[0].resources.claims[0]",
        'Not found: "gpu": must be one of the names in pod.spec.resourceClaims which is empty',
        id="a claim the pod does not have",
    ),
    pytest.param(
        pod(
            container={"resources": {"claims": [{"name": "gpu"}]}},
            spec={"resourceClaims": [{"name": "b"}, {"name": "a"}]},
        ),
        "spec.containers[0].resources.claims[0]",
        'Not found: "gpu": must be one of the names in pod.spec.resourceClaims: a, b',
        id="a claim not among the pod's",
    ),
    pytest.param(
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "d"},
            "spec": {
                "selector": {"matchExpressions": [{"key": "a b", "operator": "Exists"}]},
                "template": {"metadata": {}, "spec": {"containers": [{"name": "c"}]}},
            },
        },
        "spec.selector.matchExpressions[0].key",
        'Invalid value: "a b": name part ' + KEY_REGEX,
        id="a selector expression key",
    ),
    pytest.param(
        {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": "r"},
            "spec": {
                "template": {
                    "metadata": {"labels": {"a": "b c"}},
                    "spec": {
                        "containers": [{"name": "c", **resources({"cpu": "2"}, {"cpu": "1"})}]
                    },
                },
            },
        },
        "spec.template.metadata.labels",
        'Invalid value: "b c": ' + VALUE_REGEX,
        id="template labels before the template's containers",
    ),
    pytest.param(
        {
            "apiVersion": "policy/v1",
            "kind": "PodDisruptionBudget",
            "metadata": {"name": "p"},
            "spec": {"selector": {"matchLabels": {"app": "a/b"}}},
        },
        "spec.selector.matchLabels",
        'Invalid value: "a/b": ' + VALUE_REGEX,
        id="a PDB selector value",
    ),
]


@pytest.mark.parametrize(("raw", "field", "message"), ERRORS)
def test_validation_errors(raw: dict[str, Any], field: str, message: str) -> None:
    with pytest.raises(InputError) as exc:
        validate_object(raw["kind"], raw)
    assert (exc.value.field, exc.value.message) == (field, message)


@pytest.mark.parametrize(
    "raw",
    [
        pytest.param(pod(container=resources({"cpu": "1"}, {"cpu": "1000m"})), id="equal"),
        pytest.param(pod(container=resources({"cpu": "500m"}, {"cpu": "1"})), id="under"),
        pytest.param(pod(container=resources(limits={"cpu": "1"})), id="a limit only"),
        pytest.param(
            pod(container=resources({"example.com/gpu": 2}, {"example.com/gpu": "2"})),
            id="an extended resource at its limit",
        ),
        pytest.param(pod(container=resources(limits={"example.com/gpu": "1"})), id="limit only"),
        pytest.param(
            pod(metadata={"labels": {"app.kubernetes.io/name": "web", "tier": ""}}),
            id="prefixed key, empty value",
        ),
        pytest.param(pod(metadata={"labels": {"a": None}}), id="a null label value is empty"),
        pytest.param(
            pod(
                metadata={"annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"}}
            ),
            id="a kubectl annotation",
        ),
        pytest.param(
            pod(metadata={"annotations": {"Example.COM/Key": "x"}}),
            id="annotation keys are checked lower-cased",
        ),
    ],
)
def test_valid_objects(raw: dict[str, Any]) -> None:
    validate_object(raw["kind"], raw)


def test_only_workload_templates_are_pod_templates() -> None:
    # A Node's unknown spec.template is not read: nothing to validate, nothing to crash on.
    raw = {
        "kind": "Node",
        "spec": {"template": {"metadata": {"labels": {1: 2}}, "spec": {"containers": 5}}},
    }
    validate_object("Node", raw)
