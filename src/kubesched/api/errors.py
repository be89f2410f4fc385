"""Errors for bad input, carrying the object and field they are about."""

from __future__ import annotations


class InputError(Exception):
    """Bad user input: a malformed document, a bad field value, a missing reference.

    ``str(err)`` is one line: ``[source: ][kind ns/name: ][field: ]message``.
    The CLI prints it and exits with status 2.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str | None = None,
        obj: str | None = None,
        field: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.source = source
        self.obj = obj
        self.field = field

    def with_context(
        self, *, source: str | None = None, obj: str | None = None, field: str | None = None
    ) -> InputError:
        """Return a copy with missing context filled in (existing context wins)."""
        return InputError(
            self.message,
            source=self.source or source,
            obj=self.obj or obj,
            field=self.field or field,
        )

    def __str__(self) -> str:
        parts = [p for p in (self.source, self.obj, self.field) if p]
        parts.append(self.message)
        # One line, whatever the input held (a name with a newline in it, say).
        return ": ".join(parts).replace("\r", "\\r").replace("\n", "\\n")
