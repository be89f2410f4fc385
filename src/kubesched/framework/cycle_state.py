"""CycleState: the per-cycle blackboard plugins share, with clonable values.

Keys as upstream (``"PreFilter" + plugin name``). Values are ``StateData``: their
``clone()`` is what a cloned CycleState holds (the dry run and the nominated-pods
pass work on copies); a value never mutated after PreFilter may return itself.
"""

from __future__ import annotations

from typing import Protocol, cast


class StateData(Protocol):
    """A value kept in the CycleState (upstream ``fwk.StateData``)."""

    def clone(self) -> StateData:
        """The value a cloned CycleState holds: a copy if this one may change
        after it is written, else this very value."""
        ...


class CycleState:
    __slots__ = ("_data", "skip_filter_plugins", "skip_score_plugins")

    def __init__(self) -> None:
        self._data: dict[str, StateData] = {}
        self.skip_filter_plugins: frozenset[str] = frozenset()
        self.skip_score_plugins: frozenset[str] = frozenset()

    def write(self, key: str, value: object) -> None:
        """Keep ``value`` (a ``StateData``; typed ``object`` for the untyped spec
        memo's readers) under ``key``."""
        self._data[key] = cast(StateData, value)

    def read(self, key: str) -> object:
        """The value, or raise KeyError (upstream ErrNotFound)."""
        return self._data[key]

    def get(self, key: str) -> object | None:
        return self._data.get(key)

    def delete(self, key: str) -> None:
        self._data.pop(key, None)

    def clone(self) -> CycleState:
        """Copy: every value as its ``clone()`` gives it (upstream CycleState.Clone)."""
        c = CycleState()
        for k, v in self._data.items():
            c._data[k] = v.clone()
        c.skip_filter_plugins = self.skip_filter_plugins
        c.skip_score_plugins = self.skip_score_plugins
        return c
