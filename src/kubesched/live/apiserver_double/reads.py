"""LIST and WATCH with upstream's resourceVersion semantics.

LIST (staging/.../cacher delegator + etcd3 store):
- `resourceVersion` unset: a consistent read, list RV = the current revision;
  with `limit` it pages (continue token `{"v":"meta.k8s.io/v1","rv":R,"start":"<key>\\u0000"}`,
  base64url without padding, and `remainingItemCount` when no selector is set).
- `resourceVersion=0`: from the watch cache, list RV = the cache's revision; `limit` ignored.
- `resourceVersion=N` (NotOlderThan, no limit): from the cache once fresh enough;
  N beyond the current revision is 504 `Too large resource version`.
- `resourceVersionMatch=Exact`, or a `limit` with N != 0, or a `continue` token:
  from the revision's snapshot; older than the last compaction is 410 Expired.

WATCH (cacher.Watch): with WatchList on (`watch_list_defaulting`), `resourceVersion`
unset or 0 without `sendInitialEvents`/`resourceVersionMatch` becomes
`sendInitialEvents=true&resourceVersionMatch=NotOlderThan` (SetListOptionsDefaults),
which sends the current objects as ADDED (by key), then a BOOKMARK annotated
`k8s.io/initial-events-end`; otherwise unset or 0 sends the current objects then
live events; N > 0 replays the cache's events after N, or, older than the window,
is a 200 stream of one ERROR event `too old resource version: N (floor)`.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

from kubesched.live.apiserver_double import objects
from kubesched.live.apiserver_double.errors import (
    ApiError,
    FieldError,
    bad_request,
    expired,
    invalid,
    too_large_resource_version,
)
from kubesched.live.apiserver_double.registry import Registry
from kubesched.live.apiserver_double.resources import EVENTS, Resource
from kubesched.live.apiserver_double.selectors import (
    FieldSelector,
    LabelSelector,
    parse_field_selector,
    parse_label_selector,
)
from kubesched.live.apiserver_double.watch import WatchHub, WatchSession

Obj = dict[str, Any]
Query = dict[str, str]

CONTINUE_TOO_OLD = (
    "The provided continue parameter is too old to display a consistent list result. "
    "You can start a new list without the continue parameter, or use the continue token "
    "in this response to retrieve the remainder of the results. Continuing with the provided "
    "token results in an inconsistent list - objects that were created, modified, or deleted "
    "between the time the first chunk was returned and now may show up in the list."
)


def _truthy(value: str | None) -> bool:
    return value is not None and value.lower() in ("1", "true")


def _parse_rv(text: str, what: str = "resourceVersion") -> int:
    try:
        value = int(text)
    except ValueError:
        raise bad_request(f'invalid {what}: "{text}"') from None
    if value < 0:
        raise bad_request(f'invalid {what}: "{text}"')
    return value


def _list_options_invalid(errors: list[FieldError]) -> ApiError:
    return invalid("ListOptions", "meta.k8s.io", "", errors)


def selectors(res: Resource, query: Query) -> tuple[LabelSelector, FieldSelector]:
    labels = parse_label_selector(query.get("labelSelector", ""))
    fields = parse_field_selector(
        query.get("fieldSelector", ""), res.store, events_v1=res is EVENTS
    )
    return labels, fields


def encode_continue(rv: int, last_key: str) -> str:
    raw = json.dumps(
        {"v": "meta.k8s.io/v1", "rv": rv, "start": last_key + "\x00"}, separators=(",", ":")
    )
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        data = json.loads(raw)
        return int(data["rv"]), str(data["start"])
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise bad_request(f"continue key is not valid: {token}") from None


def list_objects(registry: Registry, res: Resource, namespace: str, query: Query) -> Obj:
    """A LIST response body (storage items presented in `res`'s version)."""
    store = registry.store
    labels, fields = selectors(res, query)
    rv_text = query.get("resourceVersion")
    match = query.get("resourceVersionMatch", "")
    limit = int(query.get("limit") or 0)
    token = query.get("continue", "")
    if query.get("sendInitialEvents") is not None:
        raise _list_options_invalid(
            [
                FieldError(
                    "FieldValueForbidden",
                    "sendInitialEvents",
                    "sendInitialEvents is forbidden for list",
                )
            ]
        )
    if match and rv_text is None:
        raise _list_options_invalid(
            [
                FieldError(
                    "FieldValueForbidden",
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                )
            ]
        )
    if match not in ("", "Exact", "NotOlderThan"):
        raise _list_options_invalid(
            [
                FieldError(
                    "FieldValueNotSupported",
                    "resourceVersionMatch",
                    'supported values: "Exact", "NotOlderThan", ""',
                    match,
                )
            ]
        )
    if match == "Exact" and rv_text == "0":
        raise _list_options_invalid(
            [
                FieldError(
                    "FieldValueForbidden",
                    "resourceVersionMatch",
                    'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                )
            ]
        )
    start_after = ""
    with store.lock:
        if token:
            list_rv, start_after = decode_continue(token)
            if list_rv < store.compacted:
                raise expired(CONTINUE_TOO_OLD)
            items = store.snapshot(res.store, list_rv)
        elif match == "Exact" or (not match and limit > 0 and rv_text not in (None, "", "0")):
            list_rv = _parse_rv(rv_text or "0")
            if list_rv < store.compacted:
                raise expired("The resourceVersion for the provided list is too old.")
            if list_rv > store.rv:
                raise too_large_resource_version(list_rv, store.rv)
            items = store.snapshot(res.store, list_rv)
        elif rv_text in (None, ""):
            list_rv = store.rv if limit > 0 else store.consistent_read(res.store)
            items = store.items(res.store)
        else:
            wanted = _parse_rv(rv_text)
            if wanted > store.rv:
                raise too_large_resource_version(wanted, store.rv)
            if wanted > store.cache_rv[res.store]:
                store.consistent_read(res.store)
            list_rv = store.cache_rv[res.store]
            items = store.items(res.store)
            limit = 0
    selected = []
    for key, obj in items:
        if namespace and not key.startswith(namespace + "/"):
            continue
        if start_after and key < start_after:
            continue
        meta = obj.get("metadata") or {}
        if labels.matches(meta.get("labels")) and fields.matches(obj):
            selected.append((key, obj))
    list_meta: Obj = {"resourceVersion": str(list_rv)}
    if limit > 0 and len(selected) > limit:
        rest = len(selected) - limit
        selected = selected[:limit]
        list_meta["continue"] = encode_continue(list_rv, selected[-1][0])
        if not labels.requirements and not fields.terms:
            list_meta["remainingItemCount"] = rest
    return {
        "kind": res.list_kind,
        "apiVersion": res.api_version,
        "metadata": list_meta,
        "items": [objects.without_type(registry.present(res, obj)) for _, obj in selected],
    }


def open_watch(
    registry: Registry,
    hub: WatchHub,
    res: Resource,
    namespace: str,
    query: Query,
    default_timeout: float,
    watch_list_defaulting: bool = True,
) -> WatchSession:
    """Register a watch and queue its initial events (or its ERROR event)."""
    store = registry.store
    labels, fields = selectors(res, query)
    rv_text = query.get("resourceVersion")
    match = query.get("resourceVersionMatch", "")
    initial = query.get("sendInitialEvents")
    bookmarks = _truthy(query.get("allowWatchBookmarks"))
    if watch_list_defaulting and initial is None and not match and rv_text in (None, "", "0"):
        # SetListOptionsDefaults (WatchList on): a legacy watch from "now" becomes a watch-list.
        initial, match = "true", "NotOlderThan"
    errors: list[FieldError] = []
    if initial is not None and match != "NotOlderThan":
        errors.append(
            FieldError(
                "FieldValueForbidden",
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            )
        )
    if match:
        if initial is None:
            errors.append(
                FieldError(
                    "FieldValueForbidden",
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden for watch unless "
                    "sendInitialEvents is provided",
                )
            )
        if match != "NotOlderThan":
            errors.append(
                FieldError(
                    "FieldValueNotSupported",
                    "resourceVersionMatch",
                    'supported values: "NotOlderThan"',
                    match,
                )
            )
    if errors:
        raise _list_options_invalid(errors)
    timeout = float(query.get("timeoutSeconds") or 0) or default_timeout
    now = registry.clock.now()

    def present(obj: Obj) -> Obj:
        return registry.present(res, obj)

    def bookmark(rv: int, initial_end: bool) -> Obj:
        return objects.bookmark_object(res.store, res.kind, res.api_version, rv, initial_end)

    with store.lock:
        start = _parse_rv(rv_text) if rv_text not in (None, "") else None
        session = WatchSession(
            res.store, namespace, labels, fields, present, bookmark, bookmarks, now + timeout, 0
        )
        if _truthy(initial):
            if start is not None and start > store.rv:
                session.error(too_large_resource_version(start, store.rv).status())
                return session
            if start is None or start > store.cache_rv[res.store]:
                store.consistent_read(res.store)
            base = store.cache_rv[res.store]
            _send_current(session, store.items(res.store))
            session.base_rv = base
            session.offer_bookmark(base, initial_events_end=True)
        elif start in (None, 0):
            session.base_rv = store.cache_rv[res.store]
            _send_current(session, store.items(res.store))
        else:
            assert start is not None
            events = store.events_since(res.store, start)
            if events is None:
                too_old = expired(f"too old resource version: {start} ({store.floor[res.store]})")
                session.error(too_old.status())
                return session
            base = start
            for event in events:
                session.offer(event)
                base = max(base, event.rv)
            session.base_rv = base
        hub.add(session)
    return session


def _send_current(session: WatchSession, items: list[tuple[str, Obj]]) -> None:
    for key, obj in items:
        if session.namespace and not key.startswith(session.namespace + "/"):
            continue
        if session.passes(obj):
            session.emit("ADDED", obj)
