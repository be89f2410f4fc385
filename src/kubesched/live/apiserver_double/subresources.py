"""pods/binding and pods/eviction, with upstream's rules and messages.

Binding (BindingREST + assignPod): the URL name must be the Binding's (400), the
target kind empty or Node with a name, the pod existing (404), not
terminating, gated or bound (409 `pod X is already assigned to node "N"`); success
sets spec.nodeName, the annotations and PodScheduled=True, answering 201.

Eviction (EvictionREST): terminal, Pending or terminating pods are deleted without
budgets; else the one matching PDB decides: unobserved -> 429 Retry-After 10,
`disruptionsAllowed` 0 -> 429 `needs N healthy pods and has M currently`, else it
is decremented (disruptedPods) and the pod gets DisruptionTarget and is deleted
with the Eviction's DeleteOptions. More than one budget is a 500.
"""

from __future__ import annotations

from typing import Any

from kubesched.live.apiserver_double import objects
from kubesched.live.apiserver_double.errors import (
    ApiError,
    bad_request,
    conflict,
    too_many_requests,
    unknown,
)
from kubesched.live.apiserver_double.registry import Registry
from kubesched.live.apiserver_double.resources import PDBS, PODS, store_key
from kubesched.live.apiserver_double.selectors import selector_from_label_selector_object

Obj = dict[str, Any]

SUCCESS_CREATED: Obj = {
    "kind": "Status",
    "apiVersion": "v1",
    "metadata": {},
    "status": "Success",
    "code": 201,
}


def _set_condition(pod: Obj, cond_type: str, status: str, now: float, **extra: str) -> None:
    """podutil.UpdatePodCondition: lastTransitionTime moves only when the status changes."""
    conditions = pod.setdefault("status", {}).setdefault("conditions", [])
    stamp = objects.rfc3339(now)
    for cond in conditions:
        if cond.get("type") == cond_type:
            if cond.get("status") != status:
                cond["lastTransitionTime"] = stamp
            cond["status"] = status
            cond.update(extra)
            return
    conditions.append(
        {
            "type": cond_type,
            "status": status,
            "lastProbeTime": None,
            "lastTransitionTime": stamp,
            **extra,
        }
    )


def bind(registry: Registry, namespace: str, name: str, body: Any) -> Obj:
    if not isinstance(body, dict):
        raise bad_request("the body of the request was in an unknown format")
    meta = body.get("metadata") or {}
    if meta.get("name") != name:
        raise bad_request("name in URL does not match name in Binding object")
    target = body.get("target") or {}
    if target.get("kind") not in (None, "", "Node"):
        raise unknown(
            500,
            f'target.kind: Unsupported value: "{target.get("kind")}": supported values: "", "Node"',
        )
    if not target.get("name"):
        raise unknown(500, "target.name: Required value")
    node = str(target["name"])
    with registry.store.lock:
        pod = registry.get_stored(PODS, namespace, name)
        pmeta = pod["metadata"]
        if meta.get("uid") and meta["uid"] != pmeta.get("uid"):
            raise conflict(
                "pods/binding",
                "",
                name,
                f"Precondition failed: UID in precondition: {meta['uid']}, UID in object meta: "
                f"{pmeta.get('uid')}",
            )
        if pmeta.get("deletionTimestamp"):
            raise conflict(
                "pods/binding",
                "",
                name,
                f"pod {name} is being deleted, cannot be assigned to a host",
            )
        spec = pod.setdefault("spec", {})
        if spec.get("nodeName"):
            raise conflict(
                "pods/binding",
                "",
                name,
                f'pod {name} is already assigned to node "{spec["nodeName"]}"',
            )
        if spec.get("schedulingGates"):
            raise conflict(
                "pods/binding", "", name, f"pod {name} has non-empty .spec.schedulingGates"
            )
        spec["nodeName"] = node
        # ClearingNominatedNodeNameAfterBinding (beta, on by default since v1.35).
        (pod.get("status") or {}).pop("nominatedNodeName", None)
        if meta.get("annotations"):
            pmeta.setdefault("annotations", {}).update(meta["annotations"])
        _set_condition(pod, "PodScheduled", "True", registry.clock.now())
        objects.normalize("pods", pod)
        registry.store.put("pods", store_key(namespace, name), pod)
    return dict(SUCCESS_CREATED)


def _pod_ready(pod: Obj) -> bool:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return bool(cond.get("status") == "True")
    return False


def evict(registry: Registry, namespace: str, name: str, body: Any) -> Obj:
    if not isinstance(body, dict):
        raise bad_request("the body of the request was in an unknown format")
    if (body.get("metadata") or {}).get("name") != name:
        raise bad_request("name in URL does not match name in Eviction object")
    options = body.get("deleteOptions") or {}
    with registry.store.lock:
        pod = registry.get_stored(PODS, namespace, name)
        phase = (pod.get("status") or {}).get("phase")
        if phase in ("Succeeded", "Failed", "Pending") or pod["metadata"].get("deletionTimestamp"):
            _condition_and_delete(registry, namespace, name, pod, options)
            return dict(SUCCESS_CREATED)
        labels = pod["metadata"].get("labels") or {}
        budgets = []
        for _, pdb in registry.store.items("poddisruptionbudgets"):
            if pdb["metadata"].get("namespace") != namespace:
                continue
            selector = selector_from_label_selector_object((pdb.get("spec") or {}).get("selector"))
            if selector is not None and selector.matches(labels):
                budgets.append(pdb)
        if len(budgets) > 1:
            raise ApiError(
                500,
                "InternalError",
                "This pod has more than one PodDisruptionBudget, which the eviction subresource "
                "does not support.",
            )
        if budgets:
            pdb = budgets[0]
            status = pdb.setdefault("status", {})
            policy = (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy") or "IfHealthyBudget"
            healthy = _pod_ready(pod)
            skip = not healthy and (
                policy == "AlwaysAllow"
                or (
                    int(status.get("currentHealthy", 0)) >= int(status.get("desiredHealthy", 0)) > 0
                )
            )
            if not skip:
                _check_and_decrement(registry, pdb, name)
        _condition_and_delete(registry, namespace, name, pod, options)
    return dict(SUCCESS_CREATED)


def _check_and_decrement(registry: Registry, pdb: Obj, pod_name: str) -> None:
    status = pdb["status"]
    meta = pdb["metadata"]
    pdb_name = meta["name"]
    if int(status.get("observedGeneration", 0)) < int(meta.get("generation", 0)):
        raise too_many_requests(
            "Cannot evict pod as it would violate the pod's disruption budget.",
            10,
            [
                {
                    "reason": "DisruptionBudget",
                    "message": f"The disruption budget {pdb_name} is still being processed by "
                    "the server.",
                }
            ],
        )
    allowed = int(status.get("disruptionsAllowed", 0))
    if allowed < 0:
        raise ApiError(
            403,
            "Forbidden",
            f'poddisruptionbudgets.policy "{pdb_name}" is forbidden: '
            "pdb disruptions allowed is negative",
        )
    if allowed == 0:
        raise too_many_requests(
            "Cannot evict pod as it would violate the pod's disruption budget.",
            0,
            [
                {
                    "reason": "DisruptionBudget",
                    "message": f"The disruption budget {pdb_name} needs "
                    f"{status.get('desiredHealthy', 0)} healthy pods and has "
                    f"{status.get('currentHealthy', 0)} currently",
                }
            ],
        )
    status["disruptionsAllowed"] = allowed - 1
    if allowed - 1 == 0:
        _set_pdb_condition(status, registry.clock.now(), meta.get("generation", 0))
    status.setdefault("disruptedPods", {})[pod_name] = objects.rfc3339(registry.clock.now())
    registry.store.put(PDBS.store, store_key(meta["namespace"], pdb_name), pdb)


def _set_pdb_condition(status: Obj, now: float, generation: int) -> None:
    conditions = status.setdefault("conditions", [])
    for cond in conditions:
        if cond.get("type") == "DisruptionAllowed":
            if cond.get("status") != "False":
                cond["lastTransitionTime"] = objects.rfc3339(now)
            cond.update(
                {
                    "status": "False",
                    "reason": "InsufficientPods",
                    "message": "",
                    "observedGeneration": generation,
                }
            )
            return
    conditions.append(
        {
            "type": "DisruptionAllowed",
            "status": "False",
            "observedGeneration": generation,
            "lastTransitionTime": objects.rfc3339(now),
            "reason": "InsufficientPods",
            "message": "",
        }
    )


def _condition_and_delete(
    registry: Registry, namespace: str, name: str, pod: Obj, options: Obj
) -> None:
    phase = (pod.get("status") or {}).get("phase")
    if phase not in ("Succeeded", "Failed"):
        before = [dict(c) for c in (pod.get("status") or {}).get("conditions") or []]
        _set_condition(
            pod,
            "DisruptionTarget",
            "True",
            registry.clock.now(),
            reason="EvictionByEvictionAPI",
            message="Eviction API: evicting",
        )
        objects.normalize("pods", pod)
        if pod["status"]["conditions"] != before:
            registry.store.put("pods", store_key(namespace, name), pod)
    registry.delete(PODS, namespace, name, options)
