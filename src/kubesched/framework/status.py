"""Status: the result of a plugin call, a code from a small closed set plus reasons.

Codes keep upstream's meaning (framework/interface.go):

- ``SUCCESS``: the plugin ran and the pod may go on.
- ``ERROR``: internal error; the cycle aborts, the pod goes to the error backoff.
- ``UNSCHEDULABLE``: the pod does not fit *now*; preemption may help.
- ``UNSCHEDULABLE_AND_UNRESOLVABLE``: the pod does not fit and preemption cannot help.
- ``WAIT``: Permit only: wait.
- ``SKIP``: PreFilter/PreScore: this plugin has nothing to do for this pod.
- ``PENDING``: the pod waits for something outside the scheduler.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import IntEnum
from typing import Final


class Code(IntEnum):
    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5
    PENDING = 6

    @property
    def upstream_name(self) -> str:
        """Upstream's spelling (``UnschedulableAndUnresolvable``)."""
        return "".join(w.capitalize() for w in self.name.split("_"))


class Status:
    """An immutable plugin result (success is ``SUCCESS``, never None); ``plugin`` is
    stamped by the runtime, plugins leave it empty."""

    __slots__ = ("code", "plugin", "reasons")

    def __init__(self, code: Code, *reasons: str, plugin: str = "") -> None:
        self.code = code
        self.reasons: tuple[str, ...] = reasons
        self.plugin = plugin

    # -- predicates -----------------------------------------------------------
    def is_success(self) -> bool:
        return self.code == Code.SUCCESS

    def is_rejected(self) -> bool:
        """Unschedulable, UnschedulableAndUnresolvable or Pending (upstream IsRejected)."""
        return self.code in _REJECTED

    def is_wait(self) -> bool:
        return self.code == Code.WAIT

    def is_skip(self) -> bool:
        return self.code == Code.SKIP

    # -- accessors ------------------------------------------------------------
    def message(self) -> str:
        """Reasons joined by ", " (upstream Status.Message)."""
        return ", ".join(self.reasons)

    def with_plugin(self, plugin: str) -> Status:
        if self.plugin == plugin:
            return self
        return Status(self.code, *self.reasons, plugin=plugin)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Status):
            return NotImplemented
        return self.code == other.code and self.reasons == other.reasons

    def __hash__(self) -> int:
        return hash((self.code, self.reasons))

    def __repr__(self) -> str:
        plugin = f", plugin={self.plugin!r}" if self.plugin else ""
        return f"Status({self.code.upstream_name}, {self.message()!r}{plugin})"


_REJECTED: Final = frozenset(
    {Code.UNSCHEDULABLE, Code.UNSCHEDULABLE_AND_UNRESOLVABLE, Code.PENDING}
)

SUCCESS: Final = Status(Code.SUCCESS)
SKIP: Final = Status(Code.SKIP)


def unschedulable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE, *reasons)


def unresolvable(*reasons: str) -> Status:
    return Status(Code.UNSCHEDULABLE_AND_UNRESOLVABLE, *reasons)


def error(message: str) -> Status:
    return Status(Code.ERROR, message)


class StatusList:
    """Distinct statuses in the order first met, equal ones sharing a position;
    append-only, so positions stay valid."""

    __slots__ = ("_pos", "items")

    def __init__(self) -> None:
        self.items: list[Status] = []
        self._pos: dict[tuple[str, int, tuple[str, ...]], int] = {}

    def positions(self, statuses: Sequence[Status]) -> list[int]:
        """The position of each of ``statuses`` in ``items`` (added if new)."""
        pos = self._pos
        out: list[int] = []
        for s in statuses:
            k = (s.plugin, int(s.code), s.reasons)
            j = pos.get(k)
            if j is None:
                j = pos[k] = len(self.items)
                self.items.append(s)
            out.append(j)
        return out
