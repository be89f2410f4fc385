"""live.channel: kept-alive connections, replaced when the server closed them, and
TLS configured from a kubeconfig as kubectl would (against the double over HTTPS).
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from kubesched.live.apiserver_double import ApiServerDouble
from kubesched.live.apiserver_double.tls import SERVER_NAME, Certificates, make_certificates
from kubesched.live.channel import Channel
from kubesched.live.client import ClusterError, Resource, connect
from kubesched.live.run import LiveRun, live_default_config
from tests.live.cluster_state import double, node, pod, wait_for

pytest.importorskip("kubernetes")

PODS = Resource("", "v1", "pods", "Pod")


def send(channel: Channel, target: str = "/api/v1/namespaces") -> int:
    return channel.send("GET", target, None, {"Accept": "application/json"}).status


def open_connections(api: ApiServerDouble) -> int:
    http = api._http
    assert http is not None
    with http.connections_lock:
        return len(http.connections)


def test_each_thread_keeps_one_connection() -> None:
    with double() as api:
        channel = Channel(api.url, timeout=10)
        assert [send(channel) for _ in range(3)] == [200] * 3
        assert open_connections(api) == 1
        other = threading.Thread(target=lambda: [send(channel) for _ in range(3)])
        other.start()
        other.join()
        wait_for(lambda: open_connections(api) == 2)
        channel.close()
        wait_for(lambda: open_connections(api) == 0)
        assert send(channel) == 200  # a new connection after close()


def test_a_connection_the_server_closed_is_replaced_before_use() -> None:
    with double() as api:
        channel = Channel(api.url, timeout=10)
        assert send(channel) == 200
        api.restart()  # cuts every connection
        wait_for(lambda: open_connections(api) == 0)
        assert send(channel) == 200
        created = channel.send(
            "POST",
            "/api/v1/namespaces/default/pods",
            b'{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},'
            b'"spec":{"containers":[{"name":"c","image":"i"}]}}',
            {"Content-Type": "application/json"},
        )
        assert created.status == 201
        assert api.get("v1", "Pod", "a", "default") is not None  # sent once, created once


def test_a_request_that_fails_on_the_wire_raises_and_is_not_sent_again() -> None:
    with double() as api:
        url = api.url
    channel = Channel(url, timeout=5)  # the server is gone
    with pytest.raises(ConnectionRefusedError):
        send(channel)


def test_a_url_that_is_not_http_is_refused() -> None:
    with pytest.raises(ValueError, match="not an http"):
        Channel("ftp://example", timeout=1)


# -- TLS ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def certificates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make certificates")
    directory = tmp_path_factory.mktemp("tls")
    make_certificates(directory, "ca")
    make_certificates(directory, "other-ca")
    return directory


@pytest.fixture
def tls_api(certificates: Path) -> Iterator[ApiServerDouble]:
    served = Certificates(
        certificates / "ca.crt",
        certificates / "ca-server.crt",
        certificates / "ca-server.key",
        SERVER_NAME,
    )
    with double(tls=served.server_context()) as api:
        yield api


def test_tls_with_the_kubeconfigs_ca_and_server_name(
    tls_api: ApiServerDouble, certificates: Path, tmp_path: Path
) -> None:
    assert tls_api.url.startswith("https://127.0.0.1:")
    client = connect(
        str(
            tls_api.write_kubeconfig(
                tmp_path / "kc",
                **{
                    "certificate-authority": str(certificates / "ca.crt"),
                    "tls-server-name": SERVER_NAME,
                },
            )
        )
    )
    tls_api.create(pod("a", "1"))
    items, version = client.list(PODS)  # through the channel
    assert [i["metadata"]["name"] for i in items] == ["a"]
    stream = client.watch(PODS, version, timeout_seconds=30)  # through urllib3
    events = iter(stream)
    tls_api.create(pod("b", "1"))
    assert next(events)["object"]["metadata"]["name"] == "b"
    stream.close()
    client.close()


@pytest.mark.parametrize(
    ("cluster", "error"),
    [
        ({"certificate-authority": "ca.crt"}, "IP address mismatch"),
        (
            {"certificate-authority": "other-ca.crt", "tls-server-name": SERVER_NAME},
            "certificate verify failed",
        ),
    ],
    ids=["the server name does not match", "another CA"],
)
def test_tls_refuses_a_server_the_kubeconfig_does_not_vouch_for(
    tls_api: ApiServerDouble,
    certificates: Path,
    tmp_path: Path,
    cluster: dict[str, str],
    error: str,
) -> None:
    cluster = {k: str(certificates / v) if k == "certificate-authority" else v
               for k, v in cluster.items()}  # fmt: skip
    client = connect(str(tls_api.write_kubeconfig(tmp_path / "kc", **cluster)))
    with pytest.raises(ClusterError, match=f"cannot reach https://.*{error}") as caught:
        client.list(PODS)
    assert "\n" not in str(caught.value)


def test_tls_without_verification_when_the_kubeconfig_says_so(
    tls_api: ApiServerDouble, tmp_path: Path
) -> None:
    kubeconfig = tls_api.write_kubeconfig(tmp_path / "kc", **{"insecure-skip-tls-verify": True})
    items, _ = connect(str(kubeconfig)).list(PODS)
    assert items == []


def test_a_missing_ca_file_is_a_kubeconfig_error(tls_api: ApiServerDouble, tmp_path: Path) -> None:
    kubeconfig = tls_api.write_kubeconfig(
        tmp_path / "kc", **{"certificate-authority": str(tmp_path / "nope.crt")}
    )
    with pytest.raises(ClusterError, match="kubeconfig"):
        connect(str(kubeconfig))


def test_a_live_run_schedules_over_tls(
    tls_api: ApiServerDouble, certificates: Path, tmp_path: Path
) -> None:
    kubeconfig = tls_api.write_kubeconfig(
        tmp_path / "kc",
        **{"certificate-authority": str(certificates / "ca.crt"), "tls-server-name": SERVER_NAME},
    )
    tls_api.create(node("n1", "2"))
    tls_api.create(
        {**pod("a", "1"), "spec": {**pod("a", "1")["spec"], "schedulerName": "kubesched"}}
    )
    run = LiveRun(connect(str(kubeconfig)), live_default_config(), None, 0)
    outcome: list[str] = []
    thread = threading.Thread(target=lambda: outcome.append(run.run()), daemon=True)
    thread.start()
    try:
        wait_for(lambda: (tls_api.get("v1", "Pod", "a", "default") or {})
                 .get("spec", {}).get("nodeName") == "n1")  # fmt: skip
    finally:
        run.stop()
        thread.join(10)
    assert outcome == [""]
