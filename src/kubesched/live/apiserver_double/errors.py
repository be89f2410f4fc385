"""API errors as the real server writes them: `metav1.Status` bodies.

Each constructor mirrors one of apimachinery's `errors.NewXxx` functions: the
same HTTP code, `reason`, message wording and `details` shape (`details.group`
is left out for the core group, `details.kind` is the resource for
NotFound/AlreadyExists/Conflict/Forbidden and the Kind for Invalid).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class ApiError(Exception):
    """An error the HTTP layer writes as a Status (and, in a watch, as an ERROR event)."""

    code: int
    reason: str
    message: str
    details: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.message

    def status(self) -> dict[str, Any]:
        """The Status object, keys in the order the real server writes them."""
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        }
        if self.reason:
            body["reason"] = self.reason
        if self.details:
            body["details"] = self.details
        body["code"] = self.code
        return body


def qualified(resource: str, group: str) -> str:
    """`pods` for the core group, `leases.coordination.k8s.io` otherwise."""
    return f"{resource}.{group}" if group else resource


def _details(name: str, group: str, kind: str, **extra: Any) -> dict[str, Any]:
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    details["kind"] = kind
    details.update(extra)
    return details


def not_found(resource: str, group: str, name: str) -> ApiError:
    return ApiError(
        404,
        "NotFound",
        f'{qualified(resource, group)} "{name}" not found',
        _details(name, group, resource),
    )


def already_exists(resource: str, group: str, name: str) -> ApiError:
    return ApiError(
        409,
        "AlreadyExists",
        f'{qualified(resource, group)} "{name}" already exists',
        _details(name, group, resource),
    )


def conflict(resource: str, group: str, name: str, why: str) -> ApiError:
    return ApiError(
        409,
        "Conflict",
        f'Operation cannot be fulfilled on {qualified(resource, group)} "{name}": {why}',
        _details(name, group, resource),
    )


OPTIMISTIC_LOCK_MESSAGE = (
    "the object has been modified; please apply your changes to the latest version and try again"
)


def stale_resource_version(resource: str, group: str, name: str) -> ApiError:
    """upstream's registry.OptimisticLockErrorMsg as a Conflict."""
    return conflict(resource, group, name, OPTIMISTIC_LOCK_MESSAGE)


@dataclass(frozen=True)
class FieldError:
    """One field.Error: type is `FieldValueRequired`, `FieldValueInvalid`, ..."""

    type: str
    field: str
    detail: str
    bad_value: Any = None

    def message(self) -> str:
        """field.Error.Error() wording."""
        kind = {
            "FieldValueRequired": "Required value",
            "FieldValueInvalid": "Invalid value",
            "FieldValueForbidden": "Forbidden",
            "FieldValueNotSupported": "Unsupported value",
            "FieldValueDuplicate": "Duplicate value",
            "FieldValueTooLong": "Too long",
        }[self.type]
        if self.type in ("FieldValueInvalid", "FieldValueNotSupported", "FieldValueDuplicate"):
            body = f"{kind}: {_go_quote(self.bad_value)}"
            return (
                f"{self.field}: {body}: {self.detail}" if self.detail else f"{self.field}: {body}"
            )
        if self.detail:
            return f"{self.field}: {kind}: {self.detail}"
        return f"{self.field}: {kind}"

    def cause(self) -> dict[str, Any]:
        cause_message = self.message()[len(self.field) + 2 :]
        return {"reason": self.type, "message": cause_message, "field": self.field}


def _go_quote(value: Any) -> str:
    if isinstance(value, str):
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def invalid(kind: str, group: str, name: str, errors: list[FieldError]) -> ApiError:
    """errors.NewInvalid: 422 with one cause per field error."""
    messages = [e.message() for e in errors]
    joined = messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"
    return ApiError(
        422,
        "Invalid",
        f'{kind}{"." + group if group else ""} "{name}" is invalid: {joined}',
        _details(name, group, kind, causes=[e.cause() for e in errors]),
    )


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def forbidden(resource: str, group: str, name: str, why: str) -> ApiError:
    subject = f'{qualified(resource, group)} "{name}"' if name else qualified(resource, group)
    return ApiError(
        403,
        "Forbidden",
        f"{subject} is forbidden: {why}",
        _details(name, group, resource),
    )


def unauthorized() -> ApiError:
    return ApiError(401, "Unauthorized", "Unauthorized")


def method_not_supported(resource: str, group: str, verb: str) -> ApiError:
    return ApiError(
        405,
        "MethodNotAllowed",
        f"{verb} is not supported on resources of kind {qualified(resource, group)!r}".replace(
            "'", '"'
        ),
        _details("", group, resource),
    )


def path_not_found() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource")


def expired(message: str) -> ApiError:
    return ApiError(410, "Expired", message)


def too_many_requests(
    message: str, retry_after: int, causes: list[dict[str, str]] | None = None
) -> ApiError:
    details: dict[str, Any] = {}
    if causes:
        details["causes"] = causes
    headers: dict[str, str] = {}
    if retry_after > 0:
        details["retryAfterSeconds"] = retry_after
        headers["Retry-After"] = str(retry_after)
    return ApiError(429, "TooManyRequests", message, details or None, headers)


def internal(message: str) -> ApiError:
    return ApiError(
        500,
        "InternalError",
        f"Internal error occurred: {message}",
        {"causes": [{"message": message}]},
    )


def unknown(code: int, message: str) -> ApiError:
    """A non-Status error turned into a Status (reason Unknown is written as no reason)."""
    return ApiError(code, "", message)


def too_large_resource_version(requested: int, current: int) -> ApiError:
    """storage.NewTooLargeResourceVersionError as the server returns it (504, retry 1s)."""
    return ApiError(
        504,
        "Timeout",
        f"Too large resource version: {requested}, current: {current}",
        {
            "causes": [
                {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
            ],
            "retryAfterSeconds": 1,
        },
        {"Retry-After": "1"},
    )
