"""Discovery and OpenAPI documents, generated for the served kinds only.

client-go's discovery (`/api`, `/apis`, `/api/v1`, `/apis/<group>/<version>`, in
the unaggregated form clients fall back to), `/version`, and kubectl's OpenAPI v3
(`/openapi/v3` and one document per group version). kubectl create/apply learns
from the v3 documents that the server validates fields: a PATCH operation tagged
with the kind's `x-kubernetes-group-version-kind` and a `fieldValidation`
parameter. The generated documents hold that plus one schema per kind (typed
top-level fields, the rest open). With `openapi_dir`, `/openapi/v3...` and
`/openapi/v2` serve its recorded files (`openapi_v3.json`,
`openapi_v3_apis_<group>_<version>.json`, ..., `openapi_v2.pb`).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from kubesched.live.apiserver_double.resources import (
    GROUP_VERSIONS,
    Resource,
    in_group_version,
)

Obj = dict[str, Any]
OBJECT_META_REF = "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"

SERVER_VERSION: Obj = {
    "major": "1",
    "minor": "36",
    "emulationMajor": "1",
    "emulationMinor": "36",
    "minCompatibilityMajor": "1",
    "minCompatibilityMinor": "35",
    "gitVersion": "v1.36.2",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-01-01T00:00:00Z",
    "goVersion": "go1.26.0",
    "compiler": "gc",
    "platform": "linux/amd64",
}


def api_versions(address: str) -> Obj:
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
    }


def _group(name: str) -> Obj:
    versions = [{"groupVersion": f"{g}/{v}", "version": v} for g, v in GROUP_VERSIONS if g == name]
    return {"name": name, "versions": versions, "preferredVersion": versions[0]}


def api_group_list() -> Obj:
    names = sorted({g for g, _ in GROUP_VERSIONS if g})
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": [_group(n) for n in names]}


def api_group(name: str) -> Obj | None:
    if not any(g == name for g, _ in GROUP_VERSIONS if g):
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group(name)}


def _storage_hash(res: Resource) -> str:
    import base64

    digest = hashlib.sha256(f"{res.group}/{res.version}/{res.kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def api_resource_list(group: str, version: str) -> Obj | None:
    served = in_group_version(group, version)
    if not served:
        return None
    resources: list[Obj] = []
    for res in sorted(served, key=lambda r: r.name):
        entry: Obj = {
            "name": res.name,
            "singularName": res.singular,
            "namespaced": res.namespaced,
            "kind": res.kind,
            "verbs": list(res.verbs),
        }
        if res.short_names:
            entry["shortNames"] = list(res.short_names)
        if res.categories:
            entry["categories"] = list(res.categories)
        if res.name != "bindings":
            entry["storageVersionHash"] = _storage_hash(res)
        resources.append(entry)
        for sub in res.subresources:
            sub_entry: Obj = {
                "name": f"{res.name}/{sub.name}",
                "singularName": "",
                "namespaced": res.namespaced,
                "kind": sub.kind,
                "verbs": list(sub.verbs),
            }
            if sub.group:
                sub_entry["group"] = sub.group
                sub_entry["version"] = sub.version
            resources.append(sub_entry)
    gv = f"{group}/{version}" if group else version
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": gv,
        "resources": resources,
    }


# -- OpenAPI v3 -------------------------------------------------------------------


def _gv_path(group: str, version: str) -> str:
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _schema_name(res: Resource) -> str:
    if not res.group:
        return f"io.k8s.api.core.v1.{res.kind}"
    short = res.group.split(".")[0]
    return f"io.k8s.api.{short}.{res.version}.{res.kind}"


def _param(name: str, where: str = "query", required: bool = False) -> Obj:
    return (
        {
            "name": name,
            "in": where,
            "required": required,
            "schema": {"type": "string", "uniqueItems": True},
        }
        if required
        else {"name": name, "in": where, "schema": {"type": "string", "uniqueItems": True}}
    )


def _operation(res: Resource, action: str, op_id: str, params: list[Obj], body: bool) -> Obj:
    ref = {"$ref": f"#/components/schemas/{_schema_name(res)}"}
    op: Obj = {
        "tags": [f"{res.group.split('.')[0] or 'core'}_{res.version}"],
        "operationId": op_id,
        "parameters": params,
        "responses": {
            "200": {"description": "OK", "content": {"application/json": {"schema": ref}}}
        },
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": {
            "group": res.group,
            "version": res.version,
            "kind": res.kind,
        },
    }
    if body:
        op["requestBody"] = {"content": {"*/*": {"schema": ref}}, "required": True}
    return op


def openapi_v3_document(group: str, version: str) -> Obj | None:
    served = [r for r in in_group_version(group, version) if r.name != "bindings"]
    if not served:
        return None
    paths: Obj = {}
    schemas: Obj = {
        "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
        }
    }
    prefix = "/" + _gv_path(group, version)
    write_params = [_param("dryRun"), _param("fieldManager"), _param("fieldValidation")]
    for res in served:
        name = res.kind
        base = (
            f"{prefix}/namespaces/{{namespace}}/{res.name}"
            if res.namespaced
            else f"{prefix}/{res.name}"
        )
        scope = [_param("namespace", "path", True)] if res.namespaced else []
        paths[base] = {
            "get": _operation(res, "list", f"list{name}", [], False),
            "post": _operation(res, "post", f"create{name}", write_params, True),
            "parameters": scope,
        }
        paths[base + "/{name}"] = {
            "get": _operation(res, "get", f"read{name}", [], False),
            "put": _operation(res, "put", f"replace{name}", write_params, True),
            "patch": _operation(
                res, "patch", f"patch{name}", [*write_params, _param("force")], True
            ),
            "delete": _operation(res, "delete", f"delete{name}", [], False),
            "parameters": [_param("name", "path", True), *scope],
        }
        schemas[_schema_name(res)] = {
            "type": "object",
            "properties": {
                "apiVersion": {"type": "string"},
                "kind": {"type": "string"},
                "metadata": {
                    "default": {},
                    "allOf": [{"$ref": OBJECT_META_REF}],
                },
            },
            "x-kubernetes-preserve-unknown-fields": True,
            "x-kubernetes-group-version-kind": [
                {"group": res.group, "kind": res.kind, "version": res.version}
            ],
        }
    return {
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": SERVER_VERSION["gitVersion"]},
        "paths": paths,
        "components": {"schemas": schemas},
    }


def _hash(doc: bytes) -> str:
    return hashlib.sha512(doc).hexdigest().upper()


class OpenAPI:
    """Serves /openapi/v3[/<gv>] and /openapi/v2, generated or from a directory."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory
        self._docs: dict[str, bytes] = {}
        if directory is None:
            for group, version in GROUP_VERSIONS:
                doc = openapi_v3_document(group, version)
                if doc is not None:
                    self._docs[_gv_path(group, version)] = json.dumps(doc).encode()

    def root(self) -> bytes:
        if self.directory is not None:
            return (self.directory / "openapi_v3.json").read_bytes()
        paths = {
            gv: {"serverRelativeURL": f"/openapi/v3/{gv}?hash={_hash(body)}"}
            for gv, body in self._docs.items()
        }
        return json.dumps({"paths": paths}).encode()

    def document(self, gv_path: str) -> bytes | None:
        if self.directory is not None:
            file = self.directory / ("openapi_v3_" + gv_path.replace("/", "_") + ".json")
            return file.read_bytes() if file.is_file() else None
        return self._docs.get(gv_path)

    def v2(self) -> bytes | None:
        if self.directory is None:
            return None
        file = self.directory / "openapi_v2.pb"
        return file.read_bytes() if file.is_file() else None
