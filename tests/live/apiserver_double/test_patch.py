"""Patch semantics (patch.py) as upstream's strategicpatch / RFC 7386 / RFC 6902 define them.

Expected results follow apimachinery's strategicpatch rules: merge lists merge by
their patchMergeKey, patch items take the patch's order and are interleaved with
server-only items by live position (normalizeElementOrder), lists without a
strategy (tolerations, containerStatuses) are replaced.
"""

from __future__ import annotations

from typing import Any

import pytest

from kubesched.live.apiserver_double.errors import ApiError
from kubesched.live.apiserver_double.patch import (
    apply_patch,
    json_merge_patch,
    json_patch,
    strategic_merge_patch,
)


def cond(kind: str, status: str = "True", **extra: Any) -> dict[str, Any]:
    return {"type": kind, "status": status, **extra}


def pod_status(*conditions: dict[str, Any]) -> dict[str, Any]:
    return {"status": {"conditions": list(conditions)}}


@pytest.mark.parametrize(
    ("original", "patch", "expected"),
    [
        pytest.param(
            pod_status(cond("PodScheduled")),
            pod_status(cond("DisruptionTarget")),
            pod_status(cond("DisruptionTarget"), cond("PodScheduled")),
            id="TestStrategicMergePatch/new-merge-item-goes-before-server-only-items",
        ),
        pytest.param(
            pod_status(cond("A"), cond("B", "False")),
            pod_status(cond("B", reason="r")),
            pod_status(cond("A"), cond("B", reason="r")),
            id="TestStrategicMergePatch/merge-by-key-keeps-live-position",
        ),
        pytest.param(
            pod_status(cond("A"), cond("B")),
            pod_status(cond("B"), cond("A")),
            pod_status(cond("B"), cond("A")),
            id="TestStrategicMergePatch/patch-items-take-the-patch-order",
        ),
        pytest.param(
            pod_status(cond("A"), cond("B")),
            {"status": {"conditions": [{"type": "A", "$patch": "delete"}]}},
            pod_status(cond("B")),
            id="TestStrategicMergePatch/delete-directive-removes-by-key",
        ),
        pytest.param(
            pod_status(cond("A"), cond("B")),
            {"status": {"conditions": [cond("C"), {"$patch": "replace"}]}},
            pod_status(cond("C")),
            id="TestStrategicMergePatch/replace-directive-in-list",
        ),
        pytest.param(
            pod_status(cond("A"), cond("B"), cond("C")),
            {
                "status": {
                    "$setElementOrder/conditions": [{"type": "C"}, {"type": "A"}, {"type": "B"}]
                }
            },
            pod_status(cond("C"), cond("A"), cond("B")),
            id="TestStrategicMergePatch/setElementOrder-reorders",
        ),
        pytest.param(
            pod_status(cond("A", reason="x")),
            pod_status(cond("A", reason=None)),
            pod_status(cond("A")),
            id="TestStrategicMergePatch/null-deletes-a-field-of-a-merged-item",
        ),
        pytest.param(
            {"spec": {"tolerations": [{"key": "a"}, {"key": "b"}]}},
            {"spec": {"tolerations": [{"key": "c"}]}},
            {"spec": {"tolerations": [{"key": "c"}]}},
            id="TestStrategicMergePatch/list-without-strategy-is-replaced",
        ),
        pytest.param(
            {"metadata": {"finalizers": ["a", "b"]}},
            {"metadata": {"finalizers": ["b", "c"]}},
            {"metadata": {"finalizers": ["a", "b", "c"]}},
            id="TestStrategicMergePatch/primitive-merge-list-deduplicates",
        ),
        pytest.param(
            {"metadata": {"finalizers": ["a", "b"]}},
            {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}},
            {"metadata": {"finalizers": ["b"]}},
            id="TestStrategicMergePatch/deleteFromPrimitiveList",
        ),
        pytest.param(
            {
                "spec": {
                    "containers": [
                        {"name": "c", "image": "a", "resources": {"requests": {"cpu": "1"}}}
                    ]
                }
            },
            {"spec": {"containers": [{"name": "c", "image": "b"}]}},
            {
                "spec": {
                    "containers": [
                        {"name": "c", "image": "b", "resources": {"requests": {"cpu": "1"}}}
                    ]
                }
            },
            id="TestStrategicMergePatch/containers-merge-by-name",
        ),
        pytest.param(
            {"metadata": {"labels": {"a": "1", "b": "2"}}},
            {"metadata": {"labels": {"$patch": "replace", "c": "3"}}},
            {"metadata": {"labels": {"c": "3"}}},
            id="TestStrategicMergePatch/replace-directive-in-map",
        ),
        pytest.param(
            {"spec": {"a": 1, "b": 2, "c": 3}},
            {"spec": {"$retainKeys": ["a", "d"], "d": 4}},
            {"spec": {"a": 1, "d": 4}},
            id="TestStrategicMergePatch/retainKeys",
        ),
    ],
)
def test_strategic_merge_patch(
    original: dict[str, Any], patch: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert strategic_merge_patch(original, patch) == expected


def test_strategic_merge_patch_item_without_merge_key_is_rejected() -> None:
    with pytest.raises(ApiError) as err:
        strategic_merge_patch(
            pod_status(cond("A")), {"status": {"conditions": [{"status": "True"}]}}
        )
    assert err.value.code == 400
    assert "does not contain declared merge key: type" in err.value.message


@pytest.mark.parametrize(
    ("original", "patch", "expected"),
    [
        pytest.param(
            pod_status(cond("A"), cond("B")),
            pod_status(cond("C")),
            pod_status(cond("C")),
            id="RFC7386/lists-replaced",
        ),
        pytest.param(
            {"a": {"b": 1, "c": 2}},
            {"a": {"b": None, "d": 3}},
            {"a": {"c": 2, "d": 3}},
            id="RFC7386/null-deletes-nested-merges",
        ),
        pytest.param(
            {"a": 1}, {"a": {"b": 2}}, {"a": {"b": 2}}, id="RFC7386/scalar-replaced-by-object"
        ),
    ],
)
def test_json_merge_patch(
    original: dict[str, Any], patch: dict[str, Any], expected: dict[str, Any]
) -> None:
    assert json_merge_patch(original, patch) == expected


def test_json_patch_operations_and_failed_test() -> None:
    doc = {"metadata": {"labels": {"a": "1"}}, "spec": {"list": [1, 2]}}
    ops = [
        {"op": "add", "path": "/metadata/labels/b", "value": "2"},
        {"op": "replace", "path": "/metadata/labels/a", "value": "x"},
        {"op": "remove", "path": "/spec/list/0"},
        {"op": "add", "path": "/spec/list/-", "value": 3},
        {"op": "copy", "from": "/metadata/labels/a", "path": "/metadata/labels/c"},
    ]
    assert json_patch(doc, ops) == {
        "metadata": {"labels": {"a": "x", "b": "2", "c": "x"}},
        "spec": {"list": [2, 3]},
    }
    with pytest.raises(ApiError):
        json_patch(doc, [{"op": "test", "path": "/metadata/labels/a", "value": "nope"}])
    with pytest.raises(ApiError):
        json_patch(doc, [{"op": "replace", "path": "/missing", "value": 1}])


def test_apply_merges_keyed_lists_and_keeps_other_managers_items() -> None:
    live = pod_status(cond("Foo"))
    applied = {
        "status": {
            "conditions": [cond("PodScheduled", "False", reason="Unschedulable")],
            "nominatedNodeName": "n1",
        }
    }
    assert apply_patch(live, applied) == {
        "status": {
            "conditions": [cond("Foo"), cond("PodScheduled", "False", reason="Unschedulable")],
            "nominatedNodeName": "n1",
        }
    }
