"""Authentication (bearer tokens) and an RBAC-like authorizer with upstream's 403 wording.

Off without tokens (every request is an allowed `system:admin`). With tokens, an
unknown token is 401; a user may do what its rules grant (`superusers` anything);
a denial is upstream's Forbidden (`... is forbidden: User "<user>" cannot <verb>
resource "<resource>[/<sub>]" in API group "<group>" in the namespace "<ns>"` or
`at the cluster scope`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kubesched.live.apiserver_double.errors import ApiError, forbidden, unauthorized


@dataclass(frozen=True)
class Rule:
    """An RBAC PolicyRule ("*" matches anything); namespaces=() means every namespace."""

    verbs: tuple[str, ...]
    api_groups: tuple[str, ...]
    resources: tuple[str, ...]
    resource_names: tuple[str, ...] = ()
    namespaces: tuple[str, ...] = ()

    def allows(self, verb: str, group: str, resource: str, name: str, namespace: str) -> bool:
        def has(values: tuple[str, ...], value: str) -> bool:
            return "*" in values or value in values

        return (
            has(self.verbs, verb)
            and has(self.api_groups, group)
            and has(self.resources, resource)
            and (not self.resource_names or name in self.resource_names)
            and (not self.namespaces or namespace in self.namespaces)
        )


@dataclass
class Auth:
    """Who may call the double, and what they may do."""

    tokens: dict[str, str] = field(default_factory=dict)  # bearer token -> user name
    rules: dict[str, list[Rule]] = field(default_factory=dict)  # user -> rules
    superusers: set[str] = field(default_factory=lambda: {"system:admin"})

    def authenticate(self, header: str | None) -> str:
        """The user for an Authorization header; raises 401 when tokens are on and it fails."""
        if not self.tokens:
            return "system:admin"
        if header and header.startswith("Bearer "):
            user = self.tokens.get(header[len("Bearer ") :].strip())
            if user is not None:
                return user
        raise unauthorized()

    def authorize(
        self,
        user: str,
        verb: str,
        group: str,
        resource: str,
        subresource: str,
        name: str,
        namespace: str,
    ) -> None:
        """Raise upstream's Forbidden unless `user` may do this."""
        if not self.tokens or user in self.superusers:
            return
        full = f"{resource}/{subresource}" if subresource else resource
        for rule in self.rules.get(user, []):
            if rule.allows(verb, group, full, name, namespace):
                return
        raise denial(user, verb, group, resource, subresource, name, namespace)


def denial(
    user: str, verb: str, group: str, resource: str, subresource: str, name: str, namespace: str
) -> ApiError:
    full = f"{resource}/{subresource}" if subresource else resource
    where = f'in the namespace "{namespace}"' if namespace else "at the cluster scope"
    why = f'User "{user}" cannot {verb} resource "{full}" in API group "{group}" {where}'
    return forbidden(resource, group, name, why)
