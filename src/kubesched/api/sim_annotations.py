"""The ``kubesched.io/*`` simulation annotations, in one place.

``kubesched.api.load`` refuses a ``kubesched.io/`` annotation not in :data:`KNOWN`
(a typo such as ``kubesched.io/delete-after`` must not silently run forever).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Final

PREFIX: Final = "kubesched.io/"
CREATE_AT: Final = PREFIX + "create-at"
DELETE_AT: Final = PREFIX + "delete-at"
RUN_FOR: Final = PREFIX + "run-for"

KNOWN: Final = frozenset({CREATE_AT, DELETE_AT, RUN_FOR})


def unknown(keys: Iterable[str]) -> str | None:
    """The first (sorted) ``kubesched.io/`` key of ``keys`` that is not known, or None."""
    bad = sorted(k for k in keys if k.startswith(PREFIX) and k not in KNOWN)
    return bad[0] if bad else None


def unknown_message(key: str) -> str:
    """``unknown simulation annotation; did you mean "kubesched.io/delete-at"? (known: ...)``"""
    known = sorted(KNOWN)
    names = [k.removeprefix(PREFIX) for k in known]  # the prefix would match anything
    close = difflib.get_close_matches(key.removeprefix(PREFIX), names, n=1, cutoff=0.6)
    hint = f'; did you mean "{PREFIX}{close[0]}"?' if close else ""
    return f"unknown simulation annotation{hint} (known: {', '.join(known)})"
