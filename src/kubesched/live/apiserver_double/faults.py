"""Request-level fault injection: answer chosen requests with an error instead.

A `Fault` matches requests by verb, resource, subresource, namespace and name (None
matches anything) and answers the next `times` of them with its Status (429 with
Retry-After, 500, a binding's 409, ...), after authentication and before any state
is touched. Stream faults and restarts are methods of the server itself.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from kubesched.live.apiserver_double.errors import ApiError, conflict, internal, too_many_requests


@dataclass
class Fault:
    error: ApiError
    verb: str | None = None
    resource: str | None = None
    subresource: str | None = None
    namespace: str | None = None
    name: str | None = None
    times: int = 1
    hits: int = field(default=0)

    def matches(
        self, verb: str, resource: str, subresource: str, namespace: str, name: str
    ) -> bool:
        return (
            (self.verb is None or self.verb == verb)
            and (self.resource is None or self.resource == resource)
            and (self.subresource is None or self.subresource == subresource)
            and (self.namespace is None or self.namespace == namespace)
            and (self.name is None or self.name == name)
        )


class Faults:
    """The armed faults of one server (thread-safe)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[Fault] = []

    def add(self, fault: Fault) -> Fault:
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def take(
        self, verb: str, resource: str, subresource: str, namespace: str, name: str
    ) -> ApiError | None:
        """The error for this request if an armed fault matches (consuming one use)."""
        with self._lock:
            for fault in self._faults:
                if fault.hits < fault.times and fault.matches(
                    verb, resource, subresource, namespace, name
                ):
                    fault.hits += 1
                    return fault.error
        return None


def throttled(
    retry_after: int = 1, message: str = "Too many requests, please try again later."
) -> ApiError:
    """The priority-and-fairness 429 (with Retry-After)."""
    return too_many_requests(message, retry_after)


def server_error(
    message: str = 'an error on the server ("unknown") has prevented the request from succeeding',
    retry_after: int = 0,
) -> ApiError:
    """A 500 InternalError, with Retry-After when `retry_after` > 0."""
    err = internal(message)
    if retry_after > 0:
        err.headers["Retry-After"] = str(retry_after)
        assert err.details is not None
        err.details["retryAfterSeconds"] = retry_after
    return err


def binding_lost(pod: str, node: str) -> ApiError:
    """What a binding gets when another scheduler bound the pod first."""
    return conflict("pods/binding", "", pod, f'pod {pod} is already assigned to node "{node}"')
