"""YAML and JSON text to plain values (dicts, lists, scalars), safe on hostile input.

Both functions raise only :class:`InputError` (``malformed YAML: line 3, column 7:
...``), never crash and never build more than the text describes:

- YAML is built from libyaml's event stream with an explicit stack: PyYAML's
  composer overflows the C stack on deep nesting (segfault at ~50,000 levels) and
  holds a node tree of ~100x the text. Nesting beyond :data:`MAX_NESTING` is an error.
- Aliases share the anchored value. A document whose aliases expand to far more
  than it spells out is refused as go-yaml refuses it (``document contains
  excessive aliasing``); an alias to an anchor still being built is an error.
- As Kubernetes reads YAML (YAML 1.1 scalars, then JSON): timestamps stay strings,
  a repeated mapping key is an error, merge keys (``<<``) merge, and numbers JSON
  cannot carry (NaN, infinities, integers of more than 4300 digits) are errors.
- JSON (one or more concatenated values): repeated keys are an error (the API
  server's strict decoding), and so are ``NaN``/``Infinity`` and numbers out of
  float range, which Go's decoder rejects; nesting is limited like YAML's.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Iterator
from typing import Any, Final

import yaml

from kubesched.api.errors import InputError

__all__ = ["MAX_NESTING", "JSONValueError", "parse_json_stream", "parse_yaml"]

MAX_NESTING: Final = 512
"""Deepest nesting of mappings and lists accepted (Kubernetes objects need a few
dozen levels, ``managedFields`` included)."""

NESTED_TOO_DEEPLY: Final = f"nested more than {MAX_NESTING} levels deep"
EXCESSIVE_ALIASING: Final = "document contains excessive aliasing"
MAX_INT_DIGITS: Final = 4300  # Python's int/str conversion limit

_YAML_BASE: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TAG: Final = "tag:yaml.org,2002:"
_STR_TAG: Final = _TAG + "str"
_MAP_TAG: Final = _TAG + "map"
_SEQ_TAG: Final = _TAG + "seq"
_SET_TAG: Final = _TAG + "set"
_PAIRS_TAGS: Final = (_TAG + "omap", _TAG + "pairs")
_MERGE_TAG: Final = _TAG + "merge"
_TIMESTAMP_TAG: Final = _TAG + "timestamp"
_FLOAT_TAG: Final = _TAG + "float"
_CACHED_TAGS: Final = frozenset(_TAG + t for t in ("int", "float", "bool", "null"))
_CACHE_SIZE: Final = 65536


class _Merge:
    """A ``<<`` key: what follows is merged into the mapping."""


_MERGE: Final = _Merge()
_NO_KEY: Final = object()


def _problem(message: str, mark: Any) -> yaml.MarkedYAMLError:
    return yaml.constructor.ConstructorError(None, None, message, mark)


def _allowed_alias_ratio(decoded: int) -> float:
    """go-yaml's allowedAliasRatio: 99% of a small document may come from aliases,
    10% of a very large one, scaling in between."""
    low, high = 400_000, 4_000_000
    if decoded <= low:
        return 0.99
    if decoded >= high:
        return 0.10
    return 0.99 - 0.89 * (decoded - low) / (high - low)


class _NotAnObject(Exception):
    """A document whose top level is not a mapping (raised before building it)."""


class _Frame:
    """A mapping or sequence being built: ``start`` is the node count when it began."""

    __slots__ = ("anchor", "is_map", "key", "key_mark", "mark", "merges", "start", "tag", "value")

    def __init__(self, is_map: bool, anchor: str | None, tag: str | None, mark: Any, start: int):
        self.is_map = is_map
        self.anchor = anchor
        self.tag = None if tag in (None, "!", _MAP_TAG, _SEQ_TAG) else tag
        self.mark = mark
        self.start = start
        self.value: Any = {} if is_map else []
        self.key: Any = _NO_KEY
        self.key_mark: Any = None
        self.merges: list[tuple[Any, Any]] = []

    def add(self, value: Any, mark: Any) -> None:
        if not self.is_map:
            self.value.append("<<" if value is _MERGE else value)
            return
        if self.key is _NO_KEY:
            self.key, self.key_mark = value, mark
            return
        key, self.key = self.key, _NO_KEY
        if key is _MERGE:
            self.merges.append((value, self.key_mark))
            return
        out = self.value
        try:
            duplicate = key in out
        except TypeError:
            raise _problem("found unhashable key", self.key_mark) from None
        if duplicate:
            raise _problem(f"mapping key {key!r} already defined", self.key_mark)
        out[key] = "<<" if value is _MERGE else value

    def finish(self) -> Any:
        if self.merges:
            self.value = self._merged()
        if self.tag is None:
            return self.value
        if self.tag == _SET_TAG and self.is_map:
            return set(self.value)
        if self.tag in _PAIRS_TAGS and not self.is_map:
            pairs: list[tuple[Any, Any]] = []
            for item in self.value:
                if not isinstance(item, dict) or len(item) != 1:
                    raise _problem(f"expected a single mapping item for {self.tag}", self.mark)
                pairs.extend(item.items())
            return pairs
        raise _problem(f"could not determine a constructor for the tag {self.tag!r}", self.mark)

    def _merged(self) -> dict[Any, Any]:
        """SafeConstructor.flatten_mapping's result: the mapping's own keys win over
        merged ones, an earlier merged mapping over a later one."""
        sources: list[dict[Any, Any]] = []
        for value, mark in self.merges:
            items = value if isinstance(value, list) else [value]
            for item in reversed(items):
                if not isinstance(item, dict):
                    raise _problem(
                        "expected a mapping or list of mappings for merging, "
                        f"but found {type(item).__name__}",
                        mark,
                    )
                sources.append(item)
        out: dict[Any, Any] = {}
        for source in sources:
            out.update(source)
        out.update(self.value)
        return out


class _EventLoader(_YAML_BASE):  # type: ignore[misc]
    """libyaml's parser, PyYAML's resolver and scalar constructors, our builder."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._plain_tags: dict[str, str] = {}
        self._scalars: dict[tuple[str, str], Any] = {}

    def documents(self) -> Iterator[Any]:
        try:
            self.get_event()  # StreamStartEvent
            while not self.check_event(yaml.StreamEndEvent):
                self.get_event()  # DocumentStartEvent
                yield self._document()
                self.get_event()  # DocumentEndEvent
        finally:
            self.dispose()

    def _document(self) -> Any:
        anchors: dict[str, tuple[Any, int]] = {}
        building: set[str] = set()
        stack: list[_Frame] = []
        decoded = aliased = 0
        get_event = self.get_event
        scalar_event, alias_event = yaml.ScalarEvent, yaml.AliasEvent
        starts = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
        while True:
            event = get_event()
            cls = type(event)
            mark = event.start_mark
            if cls is scalar_event:
                value = self._scalar(event)
                decoded += 1
                if event.anchor is not None:
                    anchors[event.anchor] = (value, 1)
            elif cls in starts:
                if not stack and cls is yaml.SequenceStartEvent:
                    # Every document is an object: do not build a list to refuse it.
                    raise _NotAnObject("list")
                if len(stack) >= MAX_NESTING:
                    raise _problem(NESTED_TOO_DEEPLY, event.start_mark)
                decoded += 1
                stack.append(
                    _Frame(
                        cls is yaml.MappingStartEvent,
                        event.anchor,
                        event.tag,
                        event.start_mark,
                        decoded,
                    )
                )
                if event.anchor is not None:
                    building.add(event.anchor)
                continue
            elif cls is alias_event:
                anchor = event.anchor
                entry = anchors.get(anchor)
                if entry is None:
                    problem = (
                        f"anchor {anchor!r} value contains itself"
                        if anchor in building
                        else f"found undefined alias {anchor!r}"
                    )
                    raise _problem(problem, event.start_mark)
                value, size = entry
                decoded += size
                aliased += size
                if (
                    aliased > 100
                    and decoded > 1000
                    and aliased / decoded > _allowed_alias_ratio(decoded)
                ):
                    raise _problem(EXCESSIVE_ALIASING, event.start_mark)
            else:  # MappingEndEvent / SequenceEndEvent
                frame = stack.pop()
                value = frame.finish()
                mark = frame.mark
                if frame.anchor is not None:
                    anchors[frame.anchor] = (value, decoded - frame.start + 1)
                    building.discard(frame.anchor)
            if not stack:
                return "<<" if value is _MERGE else value
            stack[-1].add(value, mark)

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        # The tag of a plain scalar depends only on its text (we have no path
        # resolvers), and input repeats the same texts ("c", "100m") endlessly.
        if kind is yaml.ScalarNode and implicit[0]:
            tag = self._plain_tags.get(value)
            if tag is None:
                tag = super().resolve(kind, value, implicit)
                if len(self._plain_tags) < _CACHE_SIZE:
                    self._plain_tags[value] = tag
            return tag
        return super().resolve(kind, value, implicit)

    def _scalar(self, event: Any) -> Any:
        value: str = event.value
        tag = event.tag
        if tag is None or tag == "!":
            if not event.implicit[0]:
                return value  # quoted: a string
            tag = self.resolve(yaml.ScalarNode, value, (True, False))
        if tag == _STR_TAG:
            return value
        if tag == _MERGE_TAG:
            return _MERGE
        key = (tag, value)
        cached = self._scalars.get(key, _NO_KEY)
        if cached is not _NO_KEY:
            return cached
        constructor = self.yaml_constructors.get(tag)
        if constructor is None:
            raise _problem(
                f"could not determine a constructor for the tag {tag!r}", event.start_mark
            )
        node = yaml.ScalarNode(tag, value, event.start_mark, event.end_mark, event.style)
        try:
            result = constructor(self, node)
        except ValueError:
            # int() of more digits than Python converts; nothing Kubernetes reads.
            raise _problem(
                f"integer has more than {MAX_INT_DIGITS} digits", event.start_mark
            ) from None
        if isinstance(result, float) and not math.isfinite(result):
            raise _problem(_not_a_json_number(result), event.start_mark)
        if tag in _CACHED_TAGS and len(self._scalars) < _CACHE_SIZE:
            self._scalars[key] = result
        return result


_EventLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != _TIMESTAMP_TAG]
    for first, resolvers in _YAML_BASE.yaml_implicit_resolvers.items()
}


def _not_a_json_number(value: float) -> str:
    what = "NaN" if math.isnan(value) else "infinity"
    return f"{what} is not a number JSON can carry"


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (newlines too) as one space."""
    return " ".join(text.split())


def parse_yaml(text: str, source: str) -> list[Any]:
    """The documents of a YAML stream (None for an empty document)."""
    try:
        return list(_EventLoader(text).documents())
    except _NotAnObject as err:
        raise InputError(f"expected a mapping at the top level, got {err}", source=source) from None
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        problem = err.problem or err.context or "invalid YAML"
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark is not None else ""
        raise InputError(f"malformed YAML: {where}{problem}", source=source) from None
    except (yaml.YAMLError, ValueError, TypeError, OverflowError, RecursionError) as err:
        raise InputError(f"malformed YAML: {one_line(str(err))}", source=source) from None


class _JSONProblem(ValueError):
    """A value the JSON decoder hands us that Go's decoder would refuse."""


class JSONValueError(InputError):
    """Well-formed JSON holding what Kubernetes refuses (a repeated key, NaN, a huge
    number): the text is JSON, so it must not be re-read as YAML."""


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _JSONProblem(f"duplicate field {json.dumps(key)}")
            seen.add(key)
    return out


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise _JSONProblem(f"number {text[:40]} is out of range")
    return value


def _constant(text: str) -> float:
    raise _JSONProblem(_not_a_json_number(float(text)))


_DECODER: Final = json.JSONDecoder(
    object_pairs_hook=_object, parse_float=_float, parse_constant=_constant
)


def _frame_depth() -> int:
    depth = 0
    frame: Any = sys._getframe()
    while frame is not None:
        depth += 1
        frame = frame.f_back
    return depth


def _nesting_exceeds(value: Any, limit: int) -> bool:
    """Whether containers nest more than ``limit`` deep in ``value`` (iterative)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children: Any = node.values()
        elif isinstance(node, list):
            children = node
        else:
            continue
        if depth > limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


def parse_json_stream(text: str, source: str) -> list[Any]:
    """The values of one or more concatenated JSON texts."""
    out: list[Any] = []
    pos = 0
    limit = sys.getrecursionlimit()
    # The C decoder recurses once per level and honours the recursion limit:
    # lower it for the parse so that nesting stops at about MAX_NESTING.
    sys.setrecursionlimit(min(limit, _frame_depth() + MAX_NESTING + 8))
    try:
        while True:
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos >= len(text):
                return out
            value, pos = _DECODER.raw_decode(text, pos)
            if _nesting_exceeds(value, MAX_NESTING):
                # (The recursion limit above is only approximate, and from Python 3.12
                # the C decoder counts its own recursion: check the value exactly.)
                raise RecursionError
            out.append(value)
    except json.JSONDecodeError as err:
        raise InputError(
            f"malformed JSON: line {err.lineno}, column {err.colno}: {err.msg}", source=source
        ) from None
    except RecursionError:
        raise InputError(f"malformed JSON: {NESTED_TOO_DEEPLY}", source=source) from None
    except _JSONProblem as err:
        raise JSONValueError(f"malformed JSON: {err}", source=source) from None
    except ValueError:
        raise JSONValueError(
            f"malformed JSON: integer has more than {MAX_INT_DIGITS} digits", source=source
        ) from None
    finally:
        sys.setrecursionlimit(limit)
