"""Owner references of hand-written input that name their owner without its uid.

A dump's ``metadata.ownerReferences`` carry the owner's uid, which the
controllers match (``ClaimPods``). Manifests written by hand often give only
``kind`` and ``name``: such a reference is completed with the uid of the object
of that kind and name in the input (same namespace), so it names the same owner
as it would in a cluster. A reference to an object the input does not hold is
left as it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import Protocol

from kubesched.api.convert import Workload
from kubesched.api.types import OwnerReference, Pod


class _Item(Protocol):
    obj: object


def complete_owner_uids(items: Iterable[_Item]) -> None:
    """Fill in the uid of every owner reference that has none and names a workload
    of the input; pods are updated in place, workloads replaced in their item."""
    items = list(items)
    uids = {
        (i.obj.namespace, i.obj.kind, i.obj.name): i.obj.uid
        for i in items
        if isinstance(i.obj, Workload)
    }

    def completed(ns: str, refs: tuple[OwnerReference, ...]) -> tuple[OwnerReference, ...] | None:
        if all(r.uid for r in refs):
            return None
        out = tuple(
            r if r.uid else replace(r, uid=uids.get((ns, r.kind, r.name), "")) for r in refs
        )
        return out if out != refs else None

    for item in items:
        obj = item.obj
        if isinstance(obj, Pod | Workload):
            refs = completed(obj.namespace, obj.owner_references)
            if refs is None:
                continue
            if isinstance(obj, Pod):
                obj.owner_references = refs
            else:
                item.obj = replace(obj, owner_references=refs)
