"""``metadata``: the fields every kind reads, DNS name checks, owner references,
and the Namespace kind (nothing but metadata)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from kubesched.api.convert.values import opt_time
from kubesched.api.messages import child, fail, invalid
from kubesched.api.reader import Raw, as_map, get_bool, get_str, get_str_map, req_str
from kubesched.api.types import Namespace, OwnerReference, Time

LABEL_METADATA_NAME: Final = "kubernetes.io/metadata.name"

_DNS1123_LABEL_FMT: Final = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT: Final = _DNS1123_LABEL_FMT + r"(\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_LABEL_RE: Final = re.compile("^" + _DNS1123_LABEL_FMT + "$")
_DNS1123_SUBDOMAIN_RE: Final = re.compile("^" + _DNS1123_SUBDOMAIN_FMT + "$")
# apimachinery's validation.IsDNS1123Subdomain / IsDNS1123Label messages.
DNS1123_SUBDOMAIN_MSG: Final = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is '" + _DNS1123_SUBDOMAIN_FMT + "')"
)
DNS1123_LABEL_MSG: Final = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
    "regex used for validation is '" + _DNS1123_LABEL_FMT + "')"
)


def check_dns_subdomain(name: str, path: str) -> None:
    if len(name) > 253:
        raise fail(path, invalid(name, "must be no more than 253 characters"))
    if not _DNS1123_SUBDOMAIN_RE.match(name):
        raise fail(path, invalid(name, DNS1123_SUBDOMAIN_MSG))


def check_dns_label(name: str, path: str) -> None:
    if len(name) > 63:
        raise fail(path, invalid(name, "must be no more than 63 characters"))
    if not _DNS1123_LABEL_RE.match(name):
        raise fail(path, invalid(name, DNS1123_LABEL_MSG))


@dataclass(frozen=True, slots=True)
class Meta:
    """The ``metadata`` fields every kind reads."""

    name: str
    namespace: str
    uid: str
    labels: dict[str, str]
    annotations: dict[str, str]
    creation_timestamp: Time


def object_name(raw: Raw) -> tuple[str, str]:
    """(namespace, name) as written, "" where missing or not a string: for error context
    before the metadata has been validated."""
    meta = raw.get("metadata")
    if not isinstance(meta, Mapping):
        return "", ""
    name, ns = meta.get("name"), meta.get("namespace")
    return (ns if isinstance(ns, str) else ""), (name if isinstance(name, str) else "")


def read_meta(raw: Raw, *, namespaced: bool, path: str = "metadata") -> Meta:
    meta = as_map(raw.get("metadata"), path)
    name = req_str(meta, "name", path)
    if namespaced:
        namespace = get_str(meta, "namespace", path) or "default"
        check_dns_label(namespace, child(path, "namespace"))
    else:
        namespace = ""
    created = opt_time(meta, "creationTimestamp", path)
    return Meta(
        name=name,
        namespace=namespace,
        uid=get_str(meta, "uid", path),
        labels=get_str_map(meta, "labels", path),
        annotations=get_str_map(meta, "annotations", path),
        creation_timestamp=0 if created is None else created,
    )


def owner_reference(raw: Raw, path: str) -> OwnerReference:
    """One ``metadata.ownerReferences`` item."""
    return OwnerReference(
        api_version=get_str(raw, "apiVersion", path),
        kind=get_str(raw, "kind", path),
        name=get_str(raw, "name", path),
        uid=get_str(raw, "uid", path),
        controller=get_bool(raw, "controller", path),
    )


def convert_namespace(raw: Raw) -> tuple[Namespace, dict[str, str]]:
    """A Namespace, with the ``kubernetes.io/metadata.name`` label the API server sets."""
    meta = read_meta(raw, namespaced=False)
    check_dns_label(meta.name, "metadata.name")
    labels = dict(meta.labels)
    labels[LABEL_METADATA_NAME] = meta.name
    return Namespace(name=meta.name, labels=labels), meta.annotations
