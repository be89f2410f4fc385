"""What ``simulate`` says on stderr about the input it leaves out (cli/input_warnings.py),
and the input flags, end to end through the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from kubesched.cli.input_warnings import skipped_claims_line
from kubesched.cli.main import main

NODE = """\
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "2", memory: 2Gi, pods: "10"}}
"""
POD = """\
apiVersion: v1
kind: Pod
metadata: {name: %s}
spec: {containers: [{name: c, resources: {requests: {cpu: 500m}}}]}
"""


def simulate(*args: str, stdin: str | None = None) -> Result:
    return CliRunner().invoke(main, ["simulate", *args, "-o", "json"], input=stdin)


def write(tmp_path: Path, text: str, name: str = "in.yaml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_unmodelled_kinds_get_one_warning_line_apart_from_ignored(tmp_path: Path) -> None:
    text = "---\n".join(
        [
            NODE,
            "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q}\n",
            "apiVersion: v1\nkind: LimitRange\nmetadata: {name: l1}\n",
            "apiVersion: v1\nkind: LimitRange\nmetadata: {name: l2}\n",
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
        ]
    )
    result = simulate("-f", write(tmp_path, text))
    assert result.exit_code == 0
    json.loads(result.stdout)  # stdout stays the document
    assert result.stderr.splitlines() == [
        "ignored 1 objects: 1 ConfigMap",
        "warning: 3 objects that can change scheduling are not modelled: "
        "2 LimitRange, 1 ResourceQuota",
    ]


def test_pods_with_claims_are_skipped_with_a_warning(tmp_path: Path) -> None:
    claim = (
        "apiVersion: v1\nkind: Pod\nmetadata: {name: gpu}\n"
        "spec:\n  resourceClaims: [{name: g, resourceClaimName: gpu-claim}]\n"
        "  containers: [{name: c, resources: {claims: [{name: g}]}}]\n"
    )
    result = simulate("-f", write(tmp_path, "---\n".join([NODE, claim, POD % "plain"])))
    assert result.exit_code == 0, result.stderr
    assert [p["name"] for p in json.loads(result.stdout)["pods"]] == ["plain"]
    assert result.stderr.splitlines() == [
        "warning: skipped 1 object with resource claims "
        "(dynamic resource allocation is not modelled): pod default/gpu"
    ]


def test_the_skipped_list_names_five() -> None:
    labels = [f"pod default/p{i}" for i in range(7)]
    assert skipped_claims_line(labels) == (
        "skipped 7 objects with resource claims (dynamic resource allocation is not modelled): "
        "pod default/p0, pod default/p1, pod default/p2, pod default/p3, pod default/p4, "
        "and 2 more"
    )


def test_no_node_is_a_warning_and_every_pod_stays_pending(tmp_path: Path) -> None:
    result = simulate("-f", write(tmp_path, POD % "alone"))
    assert result.exit_code == 0
    (pod,) = json.loads(result.stdout)["pods"]
    assert pod["phase"] == "Pending"
    assert result.stderr.splitlines() == ["warning: no Node in the input: every pod stays Pending"]


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("", id="an empty file"),
        pytest.param("# only a comment\n---\n---\n", id="empty documents"),
        pytest.param("apiVersion: v1\nkind: List\nitems: []\n", id="an empty List"),
    ],
)
def test_no_objects_at_all_is_kubectls_error(tmp_path: Path, text: str) -> None:
    path = write(tmp_path, text)
    result = simulate("-f", path)
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"error: {path}: no objects passed to apply"]


def test_no_objects_on_stdin_names_stdin() -> None:
    result = simulate("-f", "-", stdin="")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == ["error: <stdin>: no objects passed to apply"]


def test_a_pod_list_from_the_api_runs(tmp_path: Path) -> None:
    pods = {
        "kind": "PodList",
        "apiVersion": "v1",
        "metadata": {"resourceVersion": "1"},
        "items": [
            {
                "metadata": {"name": "from-api", "namespace": "default"},
                "spec": {"containers": [{"name": "c"}]},
            }
        ],
    }
    nodes = {
        "kind": "NodeList",
        "apiVersion": "v1",
        "items": [
            {"metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "1", "pods": "10"}}}
        ],
    }
    result = simulate(
        "-f",
        write(tmp_path, json.dumps(nodes), "nodes.json"),
        "-f",
        write(tmp_path, json.dumps(pods), "pods.json"),
    )
    assert result.exit_code == 0, result.stderr
    (pod,) = json.loads(result.stdout)["pods"]
    assert (pod["name"], pod["nodeName"]) == ("from-api", "n1")


def test_max_input_bytes_flag(tmp_path: Path) -> None:
    path = write(tmp_path, NODE)
    assert simulate("-f", path, "--max-input-bytes", str(len(NODE))).exit_code == 0
    result = simulate("-f", path, "--max-input-bytes", str(len(NODE) - 1))
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        f"error: {path}: input is larger than {len(NODE) - 1} bytes (--max-input-bytes)"
    ]


def test_max_objects_flag(tmp_path: Path) -> None:
    path = write(tmp_path, NODE + "---\n" + POD % "a")
    assert simulate("-f", path, "--max-objects", "2").exit_code == 0
    result = simulate("-f", path, "--max-objects", "1")
    assert result.stderr.splitlines() == [f"error: {path}: more than 1 objects (--max-objects)"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        pytest.param(["--max-input-bytes", "lots"], "--max-input-bytes", id="not a size"),
        pytest.param(["--max-input-bytes", "0"], "positive", id="zero bytes"),
        pytest.param(["--max-objects", "0"], "--max-objects", id="zero objects"),
    ],
)
def test_bad_cap_flags(tmp_path: Path, args: list[str], needle: str) -> None:
    result = simulate("-f", write(tmp_path, NODE), *args)
    assert result.exit_code == 2
    (line,) = result.stderr.splitlines()
    assert needle in line
