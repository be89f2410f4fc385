"""Caps on what reading the input may cost, and reading within them.

The CLI's ``--max-input-bytes`` / ``--max-objects`` fill :class:`InputLimits`; a
cap that is hit is an :class:`InputError` naming the flag, e.g. ``pods.yaml: input
is larger than 256 MiB (--max-input-bytes)``.

- ``max_input_bytes`` bounds the bytes of all ``-f`` inputs together, checked as
  chunks are read (a larger regular file is refused before reading, an endless
  stream is cut off); the first NUL or non-UTF-8 byte stops reading at once.
- ``max_objects`` bounds the input's objects (``List`` items and ignored kinds
  included) plus the pods workloads' ``replicas`` ask for.

Defaults (see README): 512 MiB holds a 10,000-node ``kubectl get nodes -o yaml``
dump (150-250 MB) with room for pods (parsing costs ~13x the text in memory);
2,000,000 objects is 10,000 nodes at 110 pods each, plus workloads.
"""

from __future__ import annotations

import codecs
import os
import stat
from dataclasses import dataclass
from typing import Any, BinaryIO, Final, TextIO

from kubesched.api.errors import InputError
from kubesched.api.quantity import QuantityError, parse_quantity

MiB: Final = 1 << 20
GiB: Final = 1 << 30
DEFAULT_MAX_INPUT_BYTES: Final = 512 * MiB
DEFAULT_MAX_OBJECTS: Final = 2_000_000
CHUNK: Final = 1 << 20

MAX_INPUT_BYTES_FLAG: Final = "--max-input-bytes"
MAX_OBJECTS_FLAG: Final = "--max-objects"


@dataclass(frozen=True, slots=True)
class InputLimits:
    max_input_bytes: int = DEFAULT_MAX_INPUT_BYTES
    max_objects: int = DEFAULT_MAX_OBJECTS


DEFAULT_LIMITS: Final = InputLimits()


def format_size(n: int) -> str:
    """``256 MiB``, ``1 GiB``, ``1.5 KiB``; plain bytes below 1 KiB."""
    for unit, size in (("GiB", GiB), ("MiB", MiB), ("KiB", 1 << 10)):
        if n >= size:
            value = n / size
            text = f"{value:.1f}".removesuffix(".0") if value < 100 else f"{value:.0f}"
            return f"{text} {unit}"
    return f"{n} bytes"


def too_large(limits: InputLimits) -> str:
    return f"input is larger than {format_size(limits.max_input_bytes)} ({MAX_INPUT_BYTES_FLAG})"


def too_many(limits: InputLimits, what: str = "objects") -> str:
    return f"more than {limits.max_objects} {what} ({MAX_OBJECTS_FLAG})"


class ReadBudget:
    """The bytes still allowed across every input of one run."""

    def __init__(self, limits: InputLimits) -> None:
        self.limits = limits
        self.left = limits.max_input_bytes

    def check_size(self, size: int, source: str) -> None:
        if size > self.left:
            raise InputError(too_large(self.limits), source=source)

    def read_binary(self, stream: BinaryIO, source: str) -> str:
        """The whole stream as text (UTF-8, an optional BOM dropped), within budget."""
        decoder = codecs.getincrementaldecoder("utf-8")()
        parts: list[str] = []
        offset = 0
        while True:
            chunk = stream.read(min(CHUNK, self.left + 1))
            if not chunk:
                break
            self._take(len(chunk), source)
            pending = len(decoder.getstate()[0])  # bytes of a character cut by the chunk
            nul = chunk.find(b"\0")
            try:
                parts.append(decoder.decode(chunk))
            except UnicodeDecodeError as err:
                at = offset - pending + err.start
                if 0 <= nul < at - offset:
                    raise _nul_error(offset + nul, source) from None
                raise InputError(
                    f"not UTF-8 text: invalid byte at offset {at}", source=source
                ) from None
            if nul >= 0:
                raise _nul_error(offset + nul, source)
            offset += len(chunk)
        try:
            parts.append(decoder.decode(b"", final=True))
        except UnicodeDecodeError:
            raise InputError(
                "not UTF-8 text: the input ends inside a character", source=source
            ) from None
        return "".join(parts).removeprefix("\ufeff")

    def read_text(self, stream: TextIO, source: str) -> str:
        """A text stream without a binary buffer (a test's StringIO), within budget."""
        parts: list[str] = []
        while True:
            chunk = stream.read(CHUNK)
            if not chunk:
                break
            self._take(len(chunk.encode("utf-8", "surrogatepass")), source)
            nul = chunk.find("\0")
            if nul >= 0:
                raise InputError(f"not a text file: NUL byte at character {nul}", source=source)
            parts.append(chunk)
        return "".join(parts).removeprefix("\ufeff")

    def _take(self, n: int, source: str) -> None:
        if n > self.left:
            raise InputError(too_large(self.limits), source=source)
        self.left -= n


def _nul_error(offset: int, source: str) -> InputError:
    return InputError(f"not a text file: NUL byte at offset {offset}", source=source)


def read_file(path: str, budget: ReadBudget) -> str:
    """A file's text within ``budget``; OS errors become InputError naming the file."""
    try:
        with open(path, "rb") as f:
            try:
                st = os.fstat(f.fileno())
            except OSError:
                st = None
            if st is not None and stat.S_ISREG(st.st_mode):
                budget.check_size(st.st_size, path)
            return budget.read_binary(f, path)
    except FileNotFoundError:
        raise InputError("no such file or directory", source=path) from None
    except IsADirectoryError:
        raise InputError("is a directory", source=path) from None
    except PermissionError:
        raise InputError("permission denied", source=path) from None
    except OSError as err:
        raise InputError(" ".join((err.strerror or str(err)).split()), source=path) from None


def read_stream(stream: Any, source: str, budget: ReadBudget) -> str:
    """Standard input (or what a caller passes instead) within ``budget``."""
    if stream is None or getattr(stream, "closed", False):
        raise InputError("standard input is closed", source=source)
    try:
        buffer = getattr(stream, "buffer", None)
        if buffer is not None:
            return budget.read_binary(buffer, source)
        return budget.read_text(stream, source)
    except UnicodeDecodeError as err:
        raise InputError(
            f"not UTF-8 text: invalid byte at offset {err.start}", source=source
        ) from None
    except OSError as err:
        raise InputError(" ".join((err.strerror or str(err)).split()), source=source) from None
    except ValueError as err:  # I/O operation on closed file
        raise InputError(" ".join(str(err).split()), source=source) from None


def parse_size(text: str) -> int:
    """A byte count for ``--max-input-bytes``: a positive integer or a quantity
    (``512Mi``, ``1Gi``, ``1G``); raises ValueError saying why not."""
    try:
        q = parse_quantity(text.strip())
    except QuantityError as err:
        raise ValueError(f"{text!r}: {err}") from None
    if q.denominator != 1 or q <= 0:
        raise ValueError(f"{text!r}: must be a positive whole number of bytes")
    return int(q)
