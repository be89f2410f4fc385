"""REST semantics of the served resources: create, get, update, patch, delete.

Mirrors the generic registry store and upstream's per-kind strategies: optimistic
concurrency (409), AlreadyExists, NotFound, status subresources, generation bumps
on spec changes, no-op writes that keep the revision, graceful deletion (pods: the
DeleteOptions or spec grace period, unscheduled or terminal pods at once, a repeat
only shortens it), finalizers, and the NamespaceLifecycle, Priority and
DefaultTolerationSeconds admission plugins.
"""

from __future__ import annotations

import copy
import random
import uuid
from collections.abc import Callable
from typing import Any

from kubesched.live.apiserver_double import objects, validation
from kubesched.live.apiserver_double.clock import Clock
from kubesched.live.apiserver_double.errors import (
    ApiError,
    FieldError,
    already_exists,
    bad_request,
    conflict,
    forbidden,
    invalid,
    not_found,
    stale_resource_version,
)
from kubesched.live.apiserver_double.patch import (
    apply_patch,
    json_merge_patch,
    json_patch,
    strategic_merge_patch,
)
from kubesched.live.apiserver_double.resources import EVENTS, Resource, store_key
from kubesched.live.apiserver_double.selectors import dig
from kubesched.live.apiserver_double.store import Store

Obj = dict[str, Any]

STATUS_STORES = frozenset(
    {
        "pods",
        "nodes",
        "namespaces",
        "poddisruptionbudgets",
        "services",
        "replicationcontrollers",
        "persistentvolumes",
        "persistentvolumeclaims",
        "replicasets",
        "statefulsets",
        "volumeattachments",
    }
)
# Kinds whose create starts from an empty status (their PrepareForCreate).
RESET_STATUS_ON_CREATE = STATUS_STORES - {"nodes"}
IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})
GENERATE_NAME_CHARS = "bcdfghjklmnpqrstvwxz2456789"
MICRO_TIME_FIELDS: dict[str, tuple[tuple[str, ...], ...]] = {
    "leases": (("spec", "acquireTime"), ("spec", "renewTime")),
    "events": (("eventTime",), ("series", "lastObservedTime")),
}


def _comparable(obj: Obj) -> Obj:
    out = copy.deepcopy(obj)
    meta = out.get("metadata") or {}
    meta.pop("resourceVersion", None)
    meta.pop("managedFields", None)
    return out


class Registry:
    """The REST layer over one Store."""

    def __init__(self, store: Store, clock: Clock, seed: int = 0) -> None:
        self.store = store
        self.clock = clock
        self.rng = random.Random(seed)
        self.on_graceful_delete: list[Callable[[Obj], None]] = []

    # -- presentation --------------------------------------------------------

    def present(self, res: Resource, obj: Obj) -> Obj:
        """Storage form -> the object as `res`'s group version shows it (with kind)."""
        view = objects.event_to_v1(obj) if res is EVENTS else copy.deepcopy(obj)
        return objects.with_type(view, res.kind, res.api_version)

    def intake(self, res: Resource, body: Obj) -> Obj:
        """A request body in `res`'s group version -> storage form."""
        self._check_micro_times(res, body)
        return objects.event_from_v1(body) if res is EVENTS else objects.without_type(body)

    def _check_micro_times(self, res: Resource, body: Obj) -> None:
        for path in MICRO_TIME_FIELDS.get(res.store, ()):
            value = dig(body, *path)
            if isinstance(value, str):
                err = objects.micro_time_error(value)
                if err:
                    raise bad_request(
                        f'{res.kind} in version "{res.version}" cannot be handled as a '
                        f"{res.kind}: {err}"
                    )

    # -- helpers -------------------------------------------------------------

    def new_uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def _key(self, res: Resource, namespace: str, name: str) -> str:
        return store_key(namespace if res.namespaced else "", name)

    def get_stored(self, res: Resource, namespace: str, name: str) -> Obj:
        obj = self.store.get(res.store, self._key(res, namespace, name))
        if obj is None:
            raise not_found(res.name, res.group, name)
        return obj

    def _admit_namespace(self, res: Resource, namespace: str, name: str) -> None:
        if not res.namespaced:
            return
        ns = self.store.get("namespaces", namespace)
        if ns is None:
            raise not_found("namespaces", "", namespace)
        if (ns.get("status") or {}).get("phase") == "Terminating":
            err = forbidden(
                res.name,
                res.group,
                name,
                f"unable to create new content in namespace {namespace} because it is being "
                "terminated",
            )
            assert err.details is not None
            err.details["causes"] = [
                {
                    "reason": "NamespaceTerminating",
                    "message": f"namespace {namespace} is being terminated",
                    "field": "metadata.namespace",
                }
            ]
            raise err

    def _validate(self, res: Resource, obj: Obj, namespace: str, creating: bool) -> None:
        name = str(obj["metadata"].get("name") or "")
        errs: list[FieldError] = []
        if creating:
            errs += validation.validate_name(name, label_only=res.store == "namespaces")
        if res.store == "pods":
            errs += validation.validate_pod(obj)
        elif res.store == "events" and creating:
            errs += validation.validate_event(obj, namespace, strict_v1=res is EVENTS)
        elif res.store == "leases":
            errs += validation.validate_lease(obj)
        elif res.store == "priorityclasses":
            errs += validation.validate_priority_class(obj)
        if errs:
            raise invalid(res.kind, "" if res.store == "events" else res.group, name, errs)

    def _admit_create(self, res: Resource, obj: Obj) -> None:
        if res.store == "pods":
            classes = [o for _, o in self.store.items("priorityclasses")]
            validation.admit_priority(obj, classes)
            validation.admit_default_toleration_seconds(obj)
        elif res.store == "priorityclasses" and obj.get("globalDefault"):
            for _, other in self.store.items("priorityclasses"):
                if (
                    other.get("globalDefault")
                    and other["metadata"]["name"] != obj["metadata"]["name"]
                ):
                    raise forbidden(
                        res.name,
                        res.group,
                        obj["metadata"]["name"],
                        f"PriorityClass {other['metadata']['name']} is already marked as "
                        "default. Only one default can exist",
                    )

    # -- create --------------------------------------------------------------

    def create(self, res: Resource, namespace: str, body: Any) -> Obj:
        """POST: returns the stored object (storage form)."""
        if not isinstance(body, dict):
            raise bad_request("the body of the request was in an unknown format")
        obj = self.intake(res, body)
        meta = obj.setdefault("metadata", {})
        if res.namespaced:
            if meta.get("namespace") and meta["namespace"] != namespace:
                raise bad_request(
                    "the namespace of the provided object does not match the namespace sent on "
                    "the request"
                )
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        with self.store.lock:
            if not meta.get("name") and meta.get("generateName"):
                suffix = "".join(self.rng.choice(GENERATE_NAME_CHARS) for _ in range(5))
                meta["name"] = f"{meta['generateName']}{suffix}"
            name = str(meta.get("name") or "")
            self._admit_namespace(res, namespace, name)
            if res.store in RESET_STATUS_ON_CREATE:
                obj["status"] = {}  # PrepareForCreate: these kinds start from an empty status
            defaulter = objects.DEFAULTERS.get(res.store)
            if defaulter:
                defaulter(obj)
            self._admit_create(res, obj)
            self._validate(res, obj, namespace, creating=True)
            key = self._key(res, namespace, name)
            if self.store.get(res.store, key) is not None:
                raise already_exists(res.name, res.group, name)
            meta.pop("resourceVersion", None)
            meta.pop("deletionTimestamp", None)
            meta.pop("deletionGracePeriodSeconds", None)
            meta["uid"] = self.new_uid()
            meta["creationTimestamp"] = objects.rfc3339(self.clock.now())
            if res.store in objects.GENERATION_STORES:
                meta["generation"] = 1
            else:
                meta.pop("generation", None)
            ordered = {
                "name": meta.pop("name"),
                **({"generateName": meta.pop("generateName")} if "generateName" in meta else {}),
            }
            if res.namespaced:
                ordered["namespace"] = meta.pop("namespace")
            ordered.update({"uid": meta.pop("uid")})
            ordered.update(meta)
            obj["metadata"] = ordered
            return self.store.put(res.store, key, objects.normalize(res.store, obj))

    # -- update --------------------------------------------------------------

    def update(self, res: Resource, namespace: str, name: str, body: Any, sub: str = "") -> Obj:
        """PUT (main resource or status): returns the stored object."""
        if not isinstance(body, dict):
            raise bad_request("the body of the request was in an unknown format")
        new = self.intake(res, body)
        body_name = (new.get("metadata") or {}).get("name")
        if body_name and body_name != name:
            raise bad_request(
                f"the name of the object ({body_name}) does not match the name on the URL ({name})"
            )
        with self.store.lock:
            old = self.get_stored(res, namespace, name)
            return self._write_update(res, namespace, name, old, new, sub)

    def _write_update(
        self, res: Resource, namespace: str, name: str, old: Obj, new: Obj, sub: str
    ) -> Obj:
        meta = new.setdefault("metadata", {})
        wanted_rv = meta.get("resourceVersion")
        if wanted_rv and wanted_rv != old["metadata"].get("resourceVersion"):
            raise stale_resource_version(res.name, res.group, name)
        old_meta = old["metadata"]
        if meta.get("uid") and meta["uid"] != old_meta.get("uid"):
            raise invalid(
                res.kind,
                "" if res.store == "events" else res.group,
                name,
                [
                    FieldError(
                        "FieldValueInvalid", "metadata.uid", "field is immutable", meta["uid"]
                    )
                ],
            )
        if sub == "status":
            merged = copy.deepcopy(old)
            merged["status"] = new.get("status", {})
            new = merged
        else:
            if res.store in STATUS_STORES:
                new["status"] = copy.deepcopy(old.get("status", {}))
            for key in (
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
                "namespace",
                "name",
            ):
                if key in old_meta:
                    new["metadata"][key] = old_meta[key]
                else:
                    new["metadata"].pop(key, None)
            defaulter = objects.DEFAULTERS.get(res.store)
            if defaulter and res.store != "pods":
                defaulter(new)
            if res.store == "pods":
                objects.default_pod(new)
                new["status"] = copy.deepcopy(old.get("status", {}))
            if res.store in objects.GENERATION_STORES and new.get("spec") != old.get("spec"):
                new["metadata"]["generation"] = int(old_meta.get("generation", 0)) + 1
        new["metadata"]["resourceVersion"] = old_meta.get("resourceVersion")
        self._validate(res, new, namespace, creating=False)
        objects.normalize(res.store, new)
        if _comparable(new) == _comparable(old):
            return old
        key = self._key(res, namespace, name)
        if new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers"):
            self.store.put(res.store, key, new)
            return self.store.remove(res.store, key)
        return self.store.put(res.store, key, new)

    # -- patch ---------------------------------------------------------------

    def patch(
        self,
        res: Resource,
        namespace: str,
        name: str,
        content_type: str,
        body: Any,
        sub: str,
        field_manager: str | None,
    ) -> tuple[int, Obj]:
        """PATCH of any supported type; returns (HTTP code, stored object)."""
        ctype = content_type.split(";", maxsplit=1)[0].strip()
        with self.store.lock:
            key = self._key(res, namespace, name)
            existing = self.store.get(res.store, key)
            if ctype == "application/apply-patch+yaml":
                if not field_manager:
                    raise invalid(
                        "PatchOptions",
                        "meta.k8s.io",
                        "",
                        [
                            FieldError(
                                "FieldValueRequired", "fieldManager", "is required for apply patch"
                            )
                        ],
                    )
                if not isinstance(body, dict):
                    raise bad_request("the body of the request was in an unknown format")
                if existing is None:
                    if sub:
                        raise not_found(res.name, res.group, name)
                    return 201, self.create(res, namespace, body)
                view = self.present(res, existing)
                patched = apply_patch(view, body)
                patched["metadata"]["resourceVersion"] = view["metadata"].get("resourceVersion")
            else:
                if existing is None:
                    raise not_found(res.name, res.group, name)
                view = self.present(res, existing)
                if ctype == "application/merge-patch+json":
                    if not isinstance(body, dict):
                        raise bad_request("the body of the request was in an unknown format")
                    patched = json_merge_patch(view, body)
                elif ctype == "application/strategic-merge-patch+json":
                    patched = strategic_merge_patch(view, body)
                elif ctype == "application/json-patch+json":
                    patched = json_patch(view, body)
                else:
                    raise ApiError(
                        415,
                        "UnsupportedMediaType",
                        "the body of the request was in an unknown format - accepted media types "
                        "include: "
                        "application/json-patch+json, application/merge-patch+json, "
                        "application/apply-patch+yaml, application/strategic-merge-patch+json",
                    )
            if not isinstance(patched, dict):
                raise bad_request("the patch result is not an object")
            new = self.intake(res, patched)
            return 200, self._write_update(res, namespace, name, existing, new, sub)

    # -- delete --------------------------------------------------------------

    def delete(
        self, res: Resource, namespace: str, name: str, options: Obj | None
    ) -> tuple[bool, Obj]:
        """DELETE: (answer with the object?, object or last state): yes while pending
        (grace period, finalizers) and for pods (ReturnDeletedObject), else a Status."""
        options = dict(options or {})
        with self.store.lock:
            obj = self.get_stored(res, namespace, name)
            meta = obj["metadata"]
            pre = options.get("preconditions") or {}
            if pre.get("uid") and pre["uid"] != meta.get("uid"):
                raise conflict(
                    res.name,
                    res.group,
                    name,
                    f"Precondition failed: UID in precondition: {pre['uid']}, UID in object "
                    f"meta: {meta.get('uid')}",
                )
            if pre.get("resourceVersion") and pre["resourceVersion"] != meta.get("resourceVersion"):
                raise conflict(
                    res.name,
                    res.group,
                    name,
                    "Precondition failed: ResourceVersion in precondition: "
                    f"{pre['resourceVersion']}, "
                    f"ResourceVersion in object meta: {meta.get('resourceVersion')}",
                )
            if res.store == "namespaces" and name in IMMORTAL_NAMESPACES:
                raise forbidden(res.name, res.group, name, "this namespace may not be deleted")
            key = self._key(res, namespace, name)
            if res.store == "namespaces":
                return True, self._delete_namespace(name, obj)
            grace = self._grace_period(res, obj, options)
            if grace is None:
                return False, self.store.remove(res.store, key)
            now = self.clock.now()
            if meta.get("deletionTimestamp"):
                current = meta.get("deletionGracePeriodSeconds")
                if (
                    current
                    and options.get("gracePeriodSeconds") is not None
                    and int(options["gracePeriodSeconds"]) < current
                ):
                    start = objects.parse_time(meta["deletionTimestamp"]) - current
                    meta["deletionTimestamp"] = objects.rfc3339(
                        start + int(options["gracePeriodSeconds"])
                    )
                    meta["deletionGracePeriodSeconds"] = int(options["gracePeriodSeconds"])
                    obj = self.store.put(res.store, key, obj)
                elif current:
                    return True, obj
            else:
                meta["deletionTimestamp"] = objects.rfc3339(now + grace)
                meta["deletionGracePeriodSeconds"] = grace
                if meta.get("generation"):
                    meta["generation"] = int(meta["generation"]) + 1
                obj = self.store.put(res.store, key, obj)
            if obj["metadata"].get("deletionGracePeriodSeconds") == 0 and not obj["metadata"].get(
                "finalizers"
            ):
                # ReturnDeletedObject: pods answer with the object, others with a Status.
                return res.store == "pods", self.store.remove(res.store, key)
            for hook in list(self.on_graceful_delete):
                hook(copy.deepcopy(obj))
            return True, obj

    def _grace_period(self, res: Resource, obj: Obj, options: Obj) -> int | None:
        """None: delete at once; else the grace period (pods' CheckGracefulDelete)."""
        requested = options.get("gracePeriodSeconds")
        if res.store != "pods":
            if obj["metadata"].get("finalizers"):
                return 0
            return None
        spec, status = obj.get("spec") or {}, obj.get("status") or {}
        if requested is not None:
            period = int(requested)
        else:
            period = int(spec.get("terminationGracePeriodSeconds") or 0)
        if not spec.get("nodeName") or status.get("phase") in ("Failed", "Succeeded"):
            period = 0
        return 1 if period < 0 else period

    def _delete_namespace(self, name: str, ns: Obj) -> Obj:
        """Mark Terminating (the answer), then do the namespace controller's work at once
        (upstream stays Terminating until its controller emptied it)."""
        ns["metadata"]["deletionTimestamp"] = objects.rfc3339(self.clock.now())
        ns["metadata"]["deletionGracePeriodSeconds"] = 0
        ns["status"] = {"phase": "Terminating"}
        answer = self.store.put("namespaces", name, ns)
        for store in list(self.store.objects):
            for key in [k for k in self.store.objects[store] if k.startswith(name + "/")]:
                self.store.remove(store, key)
        self.store.remove("namespaces", name)
        return answer

    def deleted_status(self, res: Resource, obj: Obj) -> Obj:
        """The Status body returned by DELETE for resources that do not return the object."""
        details: Obj = {"name": obj["metadata"]["name"]}
        if res.group:
            details["group"] = res.group
        details["kind"] = res.name
        details["uid"] = obj["metadata"].get("uid")
        return {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Success",
            "details": details,
        }
