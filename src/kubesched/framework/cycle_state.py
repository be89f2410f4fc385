"""CycleState: the per-cycle blackboard plugins share, with clonable values.

Keys are plugin-prefixed strings (``"PreFilter" + plugin name`` as upstream).
Values that a plugin mutates after PreFilter (through AddPod/RemovePod) must
implement ``clone()`` so that preemption's dry run and the nominated-pods
pass work on copies.
"""

from __future__ import annotations

from typing import Protocol, TypeVar


class StateData(Protocol):
    def clone(self) -> StateData: ...


T = TypeVar("T")


class CycleState:
    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._data: dict[str, object] = {}
        self.skip_filter_plugins: frozenset[str] = frozenset()
        self.skip_score_plugins: frozenset[str] = frozenset()

    def write(self, key: str, value: object) -> None:
        self._data[key] = value

    def read(self, key: str) -> object:
        """The value, or raise KeyError (upstream ErrNotFound)."""
        return self._data[key]

    def read_as(self, key: str, kind: type[T]) -> T:
        value = self._data[key]
        if not isinstance(value, kind):
            raise TypeError(f"{key!r} holds {type(value).__name__}, not {kind.__name__}")
        return value

    def get(self, key: str) -> object | None:
        return self._data.get(key)

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        """Copy: values with ``clone()`` are cloned, others shared (they are immutable)."""
        c = CycleState()
        for k, v in self._data.items():
            clone = getattr(v, "clone", None)
            c._data[k] = clone() if clone is not None else v
        c.skip_filter_plugins = self.skip_filter_plugins
        c.skip_score_plugins = self.skip_score_plugins
        return c
