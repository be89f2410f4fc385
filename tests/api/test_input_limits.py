"""Caps on the input and reading within them (api/input_limits.py, api/load.py)."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from kubesched.api.errors import InputError
from kubesched.api.input_limits import (
    CHUNK,
    DEFAULT_MAX_INPUT_BYTES,
    DEFAULT_MAX_OBJECTS,
    InputLimits,
    ReadBudget,
    format_size,
    parse_size,
    read_file,
    read_stream,
)
from kubesched.api.load import documents_from_text, load_objects, read_documents

NODE = "apiVersion: v1\nkind: Node\nmetadata: {name: %s}\n"


def test_defaults_are_the_documented_ones() -> None:
    assert DEFAULT_MAX_INPUT_BYTES == 512 * 2**20
    assert DEFAULT_MAX_OBJECTS == 2_000_000


@pytest.mark.parametrize(
    ("n", "text"),
    [
        pytest.param(512 * 2**20, "512 MiB", id="MiB"),
        pytest.param(2**30, "1 GiB", id="GiB"),
        pytest.param(1536, "1.5 KiB", id="a fraction"),
        pytest.param(100, "100 bytes", id="bytes"),
        pytest.param(300 * 2**30, "300 GiB", id="no decimals from 100 up"),
    ],
)
def test_format_size(n: int, text: str) -> None:
    assert format_size(n) == text


@pytest.mark.parametrize(
    ("text", "n"),
    [
        pytest.param("512Mi", 512 * 2**20, id="binary suffix"),
        pytest.param("1G", 10**9, id="decimal suffix"),
        pytest.param("1000", 1000, id="plain bytes"),
        pytest.param(" 2Ki ", 2048, id="spaces around"),
    ],
)
def test_parse_size(text: str, n: int) -> None:
    assert parse_size(text) == n


@pytest.mark.parametrize("text", ["lots", "0", "-1Mi", "0.5"])
def test_parse_size_refuses(text: str) -> None:
    with pytest.raises(ValueError, match=repr(text)):
        parse_size(text)


def budget(n: int) -> ReadBudget:
    return ReadBudget(InputLimits(max_input_bytes=n))


def test_a_regular_file_over_the_cap_is_refused_before_reading(tmp_path: Path) -> None:
    f = tmp_path / "huge.yaml"
    with open(f, "wb") as out:
        out.truncate(3 * 2**30)  # sparse: nothing is written, nothing must be read
    with pytest.raises(InputError) as exc:
        read_file(str(f), ReadBudget(InputLimits()))
    assert str(exc.value) == f"{f}: input is larger than 512 MiB (--max-input-bytes)"


def test_a_stream_is_cut_off_at_the_cap() -> None:
    endless = io.BytesIO(b"a: b\n" * (3 * CHUNK))
    with pytest.raises(InputError) as exc:
        budget(CHUNK + 10).read_binary(endless, "<stdin>")
    assert str(exc.value) == "<stdin>: input is larger than 1 MiB (--max-input-bytes)"
    assert endless.tell() <= 2 * CHUNK + 11  # it stopped reading


def test_the_budget_is_shared_by_every_input(tmp_path: Path) -> None:
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(NODE % "a")
    b.write_text(NODE % "b")
    size = len((NODE % "a").encode())
    assert len(read_documents([str(a), str(b)], limits=InputLimits(2 * size))) == 2
    with pytest.raises(InputError) as exc:
        read_documents([str(a), str(b)], limits=InputLimits(2 * size - 1))
    assert exc.value.source == str(b)
    assert exc.value.message.startswith("input is larger than ")


@pytest.mark.parametrize(
    ("data", "message"),
    [
        pytest.param(b"kind: \0Pod\n", "not a text file: NUL byte at offset 6", id="a NUL byte"),
        pytest.param(
            b"kind: \xffPod\n", "not UTF-8 text: invalid byte at offset 6", id="not UTF-8"
        ),
        pytest.param(
            b"x" * (CHUNK - 1) + "é".encode() + b"\xff",
            f"not UTF-8 text: invalid byte at offset {CHUNK + 1}",
            id="offsets count across chunks",
        ),
        pytest.param(
            b"kind: Pod\n\xc3", "not UTF-8 text: the input ends inside a character", id="cut"
        ),
        pytest.param(b"\xff\xfek\0i\0", "not UTF-8 text: invalid byte at offset 0", id="UTF-16"),
    ],
)
def test_binary_input_stops_at_the_first_bad_byte(data: bytes, message: str) -> None:
    with pytest.raises(InputError) as exc:
        budget(10 * CHUNK).read_binary(io.BytesIO(data), "bin.yaml")
    assert exc.value.message == message


def test_dev_zero_stops_at_once() -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero")
    with pytest.raises(InputError) as exc:
        read_file("/dev/zero", ReadBudget(InputLimits()))
    assert str(exc.value) == "/dev/zero: not a text file: NUL byte at offset 0"


def test_a_byte_order_mark_is_dropped() -> None:
    assert budget(100).read_binary(io.BytesIO(b"\xef\xbb\xbfkind: Pod"), "x") == "kind: Pod"


@pytest.mark.parametrize(
    "stream",
    [pytest.param(None, id="no stdin"), pytest.param(io.StringIO(), id="a closed stream")],
)
def test_closed_stdin(stream: io.StringIO | None) -> None:
    if stream is not None:
        stream.close()
    with pytest.raises(InputError) as exc:
        read_stream(stream, "<stdin>", budget(100))
    assert str(exc.value) == "<stdin>: standard input is closed"


def test_a_text_stream_counts_utf8_bytes() -> None:
    text = "é" * 60  # 120 bytes
    assert read_stream(io.StringIO(text), "<stdin>", budget(120)) == text
    with pytest.raises(InputError, match="input is larger than 119 bytes"):
        read_stream(io.StringIO(text), "<stdin>", budget(119))


# --------------------------------------------------------------------------- objects


def test_objects_are_capped_across_lists_and_files(tmp_path: Path) -> None:
    a = tmp_path / "a.yaml"
    a.write_text(
        "kind: List\napiVersion: v1\nitems:\n"
        + "".join(f"- {{apiVersion: v1, kind: Node, metadata: {{name: n{i}}}}}\n" for i in range(3))
    )
    b = tmp_path / "b.yaml"
    b.write_text(NODE % "last")
    assert len(read_documents([str(a), str(b)], limits=InputLimits(max_objects=4))) == 4
    with pytest.raises(InputError) as exc:
        read_documents([str(a), str(b)], limits=InputLimits(max_objects=3))
    assert str(exc.value) == f"{b}: more than 3 objects (--max-objects)"


def test_ignored_objects_count() -> None:
    docs = documents_from_text(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n" + NODE % "n", "in.yaml"
    )
    load_objects(docs, limits=InputLimits(max_objects=2))
    with pytest.raises(InputError, match=r"more than 1 objects \(--max-objects\)"):
        load_objects(docs, limits=InputLimits(max_objects=1))


DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  replicas: %d
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: c}]}
"""


@pytest.mark.parametrize(
    ("replicas", "cap", "ok"),
    [
        pytest.param(9, 10, True, id="the Deployment and its 9 pods fit 10"),
        pytest.param(10, 10, False, id="and 10 do not"),
        pytest.param(2**31 - 1, DEFAULT_MAX_OBJECTS, False, id="2^31-1 replicas"),
    ],
)
def test_replicas_count_as_objects(replicas: int, cap: int, ok: bool) -> None:
    docs = documents_from_text(DEPLOYMENT % replicas, "web.yaml")
    limits = InputLimits(max_objects=cap)
    if ok:
        assert len(load_objects(docs, limits=limits).objects) == 1
        return
    with pytest.raises(InputError) as exc:
        load_objects(docs, limits=limits)
    assert str(exc.value) == (
        f"web.yaml: deployment default/web: spec.replicas: {replicas} replicas would make "
        f"more than {cap} objects (--max-objects)"
    )
