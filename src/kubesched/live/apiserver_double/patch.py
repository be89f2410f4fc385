"""PATCH bodies: JSON merge patch, strategic merge patch, JSON patch, and a simple apply.

Strategic merge follows apimachinery's strategicpatch for the fields of the kinds
the double serves: lists with `patchStrategy: merge` merge by their
`patchMergeKey` (pod and node `status.conditions` by `type`, `spec.containers`
by `name`, ...), other lists are replaced; `$patch: replace|delete`,
`$retainKeys`, `$setElementOrder/<list>` and `$deleteFromPrimitiveList/<list>`
directives are honoured; the merged list's order is upstream's
normalizeElementOrder (patch items in patch order, server-only items in live
order, interleaved by live position). JSON merge patch (RFC 7386) replaces
lists whole.

Server-side apply is simplified: keyed lists (`listType: map`) merge by key (live
order, new items appended), everything else is replaced; field ownership and
managedFields are not tracked, so fields a manager stops applying stay.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from kubesched.live.apiserver_double.errors import ApiError, bad_request, unknown

Obj = dict[str, Any]
Path = tuple[str, ...]

# (path from the object root, "[]" for list items) -> merge key ("" = list of primitives).
MERGE_LISTS: dict[Path, str] = {
    ("metadata", "finalizers"): "",
    ("metadata", "ownerReferences"): "uid",
    ("spec", "containers"): "name",
    ("spec", "initContainers"): "name",
    ("spec", "ephemeralContainers"): "name",
    ("spec", "volumes"): "name",
    ("spec", "imagePullSecrets"): "name",
    ("spec", "hostAliases"): "ip",
    ("spec", "topologySpreadConstraints"): "topologyKey",
    ("spec", "schedulingGates"): "name",
    ("spec", "resourceClaims"): "name",
    ("spec", "podCIDRs"): "",
    ("status", "conditions"): "type",
    ("status", "podIPs"): "ip",
    ("status", "hostIPs"): "ip",
    ("status", "addresses"): "type",
}
for _containers in ("containers", "initContainers", "ephemeralContainers"):
    MERGE_LISTS[("spec", _containers, "[]", "ports")] = "containerPort"
    MERGE_LISTS[("spec", _containers, "[]", "env")] = "name"
    MERGE_LISTS[("spec", _containers, "[]", "volumeMounts")] = "mountPath"
    MERGE_LISTS[("spec", _containers, "[]", "volumeDevices")] = "devicePath"

# Lists that server-side apply treats as associative (listType=map) beyond MERGE_LISTS.
APPLY_KEYED_LISTS: dict[Path, str] = {
    **{p: k for p, k in MERGE_LISTS.items() if k},
    ("status", "containerStatuses"): "name",
    ("status", "initContainerStatuses"): "name",
}

SET_ORDER = "$setElementOrder/"
DELETE_PRIMITIVE = "$deleteFromPrimitiveList/"
RETAIN_KEYS = "$retainKeys"
DIRECTIVE = "$patch"


def json_merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = json_merge_patch(result.get(key), value)
    return result


def strategic_merge_patch(original: Obj, patch: Obj) -> Obj:
    """Apply a strategic merge patch to an object (both left unmodified)."""
    if not isinstance(patch, dict):
        raise bad_request("the body of the request was in an unknown format")
    return _merge_map(copy.deepcopy(original), copy.deepcopy(patch), ())


def _merge_map(original: Obj, patch: Obj, path: Path) -> Obj:
    directive = patch.pop(DIRECTIVE, None)
    if directive == "replace":
        return patch
    if directive == "delete":
        return {}
    if directive is not None:
        raise bad_request(f"Unknown patch type: {directive} in map: {json.dumps(patch)}")
    retain = patch.pop(RETAIN_KEYS, None)
    if isinstance(retain, list):
        for key in list(original):
            if key not in retain:
                del original[key]
    orders: dict[str, list[Any]] = {}
    for key in list(patch):
        if key.startswith(SET_ORDER):
            orders[key[len(SET_ORDER) :]] = patch.pop(key)
        elif key.startswith(DELETE_PRIMITIVE):
            field, doomed = key[len(DELETE_PRIMITIVE) :], patch.pop(key)
            if isinstance(original.get(field), list):
                original[field] = [v for v in original[field] if v not in doomed]
    before = {key: copy.deepcopy(original.get(key)) for key in orders}
    for key, value in patch.items():
        sub = (*path, key)
        if value is None:
            original.pop(key, None)
            continue
        if key not in original:
            original[key] = _strip_directives(value)
            continue
        current = original[key]
        if isinstance(current, dict) and isinstance(value, dict):
            original[key] = _merge_map(current, value, sub)
        elif isinstance(current, list) and isinstance(value, list) and sub in MERGE_LISTS:
            original[key] = _merge_list(current, value, MERGE_LISTS[sub], sub)
        else:
            original[key] = _strip_directives(value)
    for key, order in orders.items():
        if isinstance(original.get(key), list):
            merge_key = MERGE_LISTS.get((*path, key), "")
            prior = before[key]
            live: list[Any] = prior if isinstance(prior, list) else []
            original[key] = _enforce_order(original[key], order, order, live, merge_key)
    return original


def _strip_directives(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _strip_directives(v) for k, v in value.items() if not k.startswith("$")}
    if isinstance(value, list):
        return [
            _strip_directives(v)
            for v in value
            if not (isinstance(v, dict) and v.get(DIRECTIVE) == "delete")
        ]
    return value


def _key_of(item: Any, merge_key: str) -> Any:
    return item.get(merge_key) if merge_key and isinstance(item, dict) else item


def _merge_list(original: list[Any], patch: list[Any], merge_key: str, path: Path) -> list[Any]:
    if not merge_key:
        merged: list[Any] = []
        for item in original + patch:
            if item not in merged:
                merged.append(item)
        return _enforce_order(merged, patch, patch, original, "")
    plain: list[Any] = []
    for item in patch:
        if not isinstance(item, dict):
            raise bad_request(f"value for key {merge_key} is not a map")
        directive = item.get(DIRECTIVE)
        if directive == "delete":
            original = [o for o in original if _key_of(o, merge_key) != item.get(merge_key)]
        elif directive == "replace":
            return [_strip_directives(i) for i in patch if DIRECTIVE not in i]
        elif directive is not None:
            raise bad_request(f"Unknown patch type: {directive} in map: {json.dumps(item)}")
        else:
            if merge_key not in item:
                raise bad_request(
                    f"map: {json.dumps(item)} does not contain declared merge key: {merge_key}"
                )
            plain.append(item)
    result = list(original)
    for item in plain:
        for i, existing in enumerate(result):
            if isinstance(existing, dict) and existing.get(merge_key) == item[merge_key]:
                result[i] = _merge_map(existing, item, (*path, "[]"))
                break
        else:
            result.append(_strip_directives(item))
    return _enforce_order(result, plain, plain, original, merge_key)


def _enforce_order(
    merged: list[Any],
    partition_by: list[Any],
    patch_order: list[Any],
    server_order: list[Any],
    merge_key: str,
) -> list[Any]:
    """upstream's partition + normalizeElementOrder + mergeSortedSlice."""
    wanted = [_key_of(p, merge_key) for p in partition_by]
    patch_items = [m for m in merged if _key_of(m, merge_key) in wanted]
    server_only = [m for m in merged if _key_of(m, merge_key) not in wanted]

    def index(lst: list[Any], item: Any) -> int:
        key = _key_of(item, merge_key)
        for i, other in enumerate(lst):
            if _key_of(other, merge_key) == key:
                return i
        return -1

    def sort_by(items: list[Any], order: list[Any]) -> list[Any]:
        # sort.SliceStable with upstream's less: known-before-known by position,
        # and "true" whenever either side is unknown; emulate with insertion sort.
        out: list[Any] = []
        for item in items:
            pos = len(out)
            while pos > 0:
                ii, ij = index(order, item), index(order, out[pos - 1])
                less = ii < ij if ii >= 0 and ij >= 0 else True
                if not less:
                    break
                pos -= 1
            out.insert(pos, item)
        return out

    patch_items = sort_by(patch_items, patch_order)
    server_only = sort_by(server_only, server_order)
    result: list[Any] = []
    i = j = 0
    while i < len(server_only) or j < len(patch_items):
        if i >= len(server_only):
            result.append(patch_items[j])
            j += 1
        elif j >= len(patch_items):
            result.append(server_only[i])
            i += 1
        else:
            li, ri = index(server_order, server_only[i]), index(server_order, patch_items[j])
            if li >= 0 and ri >= 0 and li < ri:
                result.append(server_only[i])
                i += 1
            else:
                result.append(patch_items[j])
                j += 1
    return result


def json_patch(target: Obj, operations: Any) -> Obj:
    """RFC 6902 (add, remove, replace, move, copy, test)."""
    if not isinstance(operations, list):
        raise bad_request("the body of the request was in an unknown format")
    doc: Any = copy.deepcopy(target)
    for op in operations:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise unknown(500, "Unable to decode the JSON patch operation")
        kind, path = op["op"], op["path"]
        if kind == "test":
            if _pointer_get(doc, path) != op.get("value"):
                raise unknown(
                    422,
                    "the server rejected our request due to an error in our request: testing "
                    f"value {path} failed",
                )
        elif kind == "remove":
            doc = _pointer_remove(doc, path)
        elif kind in ("add", "replace"):
            if kind == "replace":
                _pointer_get(doc, path)
            doc = _pointer_add(doc, path, copy.deepcopy(op.get("value")), kind == "replace")
        elif kind in ("move", "copy"):
            value = copy.deepcopy(_pointer_get(doc, op.get("from", "")))
            if kind == "move":
                doc = _pointer_remove(doc, op.get("from", ""))
            doc = _pointer_add(doc, path, value, False)
        else:
            raise unknown(500, f"Unexpected kind: {kind}")
    if not isinstance(doc, dict):
        raise bad_request("the patch result is not an object")
    return doc


def _tokens(pointer: str) -> list[str]:
    if pointer == "":
        return []
    if not pointer.startswith("/"):
        raise unknown(500, f'JSON pointer must be empty or start with a "/": {pointer}')
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer[1:].split("/")]


def _missing(pointer: str) -> ApiError:
    return unknown(
        422,
        f"the server rejected our request due to an error in our request: path {pointer} not found",
    )


def _pointer_get(doc: Any, pointer: str) -> Any:
    cur = doc
    for tok in _tokens(pointer):
        if isinstance(cur, dict) and tok in cur:
            cur = cur[tok]
        elif isinstance(cur, list) and tok.isdigit() and int(tok) < len(cur):
            cur = cur[int(tok)]
        else:
            raise _missing(pointer)
    return cur


def _parent(doc: Any, toks: list[str]) -> Any:
    if len(toks) == 1:
        return doc
    return _pointer_get(
        doc, "/" + "/".join(t.replace("~", "~0").replace("/", "~1") for t in toks[:-1])
    )


def _pointer_add(doc: Any, pointer: str, value: Any, replace: bool) -> Any:
    toks = _tokens(pointer)
    if not toks:
        return value
    parent = _parent(doc, toks)
    last = toks[-1]
    if isinstance(parent, dict):
        parent[last] = value
    elif isinstance(parent, list):
        if last == "-":
            parent.append(value)
        elif last.isdigit() and int(last) <= len(parent):
            if replace:
                parent[int(last)] = value
            else:
                parent.insert(int(last), value)
        else:
            raise _missing(pointer)
    else:
        raise _missing(pointer)
    return doc


def _pointer_remove(doc: Any, pointer: str) -> Any:
    toks = _tokens(pointer)
    if not toks:
        raise _missing(pointer)
    parent = _parent(doc, toks)
    last = toks[-1]
    if isinstance(parent, dict) and last in parent:
        del parent[last]
    elif isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        del parent[int(last)]
    else:
        raise _missing(pointer)
    return doc


def apply_patch(live: Obj | None, applied: Obj) -> Obj:
    """The simplified server-side apply merge (see the module docstring)."""
    return _apply_map(copy.deepcopy(live) if live else {}, copy.deepcopy(applied), ())


def _apply_map(live: Obj, applied: Obj, path: Path) -> Obj:
    for key, value in applied.items():
        sub = (*path, key)
        current = live.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            live[key] = _apply_map(current, value, sub)
        elif isinstance(current, list) and isinstance(value, list) and sub in APPLY_KEYED_LISTS:
            merge_key = APPLY_KEYED_LISTS[sub]
            merged = list(current)
            for item in value:
                for i, existing in enumerate(merged):
                    if (
                        isinstance(existing, dict)
                        and isinstance(item, dict)
                        and existing.get(merge_key) == item.get(merge_key)
                    ):
                        merged[i] = _apply_map(existing, item, (*sub, "[]"))
                        break
                else:
                    merged.append(item)
            live[key] = merged
        else:
            live[key] = value
    return live
