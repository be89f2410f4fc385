"""An append-only log of changed rows, followed by readers with a cursor.

Per-row caches remember their cursor and recompute only the rows logged
``since``; the tail is bounded, a reader lagging too far gets None.
"""

from __future__ import annotations

from typing import Final

_SLACK: Final = 4096
"""Entries kept beyond the number of rows before the older half is dropped."""


class RowLog:
    __slots__ = ("_base", "_rows")

    def __init__(self) -> None:
        self._rows: list[int] = []
        self._base = 0

    @property
    def seq(self) -> int:
        """How many rows were logged so far (a cursor for ``since``)."""
        return self._base + len(self._rows)

    def since(self, seq: int) -> list[int] | None:
        """Rows logged since the cursor ``seq`` (possibly repeated, in order), or
        None when that part of the log was dropped (recompute everything)."""
        if seq < self._base:
            return None
        return self._rows[seq - self._base :]

    def add(self, row: int, rows: int) -> None:
        """Log ``row``; ``rows``: how many rows there are (sizes the kept tail)."""
        log = self._rows
        log.append(row)
        if len(log) > _SLACK + rows:
            drop = len(log) // 2
            del log[:drop]
            self._base += drop
