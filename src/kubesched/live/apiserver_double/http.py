"""The HTTP front: routing, JSON in and out, chunked watch streams, connection cuts.

The standard library's ThreadingHTTPServer (a thread per connection, keep-alive):
owning the socket lets the double end a watch cleanly, drop it mid-stream or cut
every connection on a "restart", which frameworks hide.
"""

from __future__ import annotations

import contextlib
import json
import socket
import ssl
import threading
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, urlsplit

import yaml

from kubesched.live.apiserver_double import discovery, objects, reads, subresources, tables
from kubesched.live.apiserver_double.errors import (
    ApiError,
    bad_request,
    method_not_supported,
    path_not_found,
    too_large_resource_version,
)
from kubesched.live.apiserver_double.resources import GROUP_VERSIONS, NAMESPACES, Resource, lookup

if TYPE_CHECKING:
    from kubesched.live.apiserver_double.server import ApiServerDouble

Obj = dict[str, Any]

VERBS = {"POST": "create", "PUT": "update", "PATCH": "patch"}


class DoubleHTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(
        self, address: tuple[str, int], double: ApiServerDouble, tls: ssl.SSLContext | None
    ) -> None:
        self.double = double
        self.connections: set[socket.socket] = set()
        self.connections_lock = threading.Lock()
        self.tls = tls
        super().__init__(address, Handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        """The accepted connection, wrapped in TLS when the server speaks HTTPS
        (the handshake runs in the connection's own thread)."""
        conn, address = super().get_request()
        if self.tls is not None:
            conn = self.tls.wrap_socket(conn, server_side=True, do_handshake_on_connect=False)
        return conn, address

    def cut_connections(self) -> None:
        with self.connections_lock:
            conns = list(self.connections)
        for conn in conns:
            with contextlib.suppress(OSError):
                conn.shutdown(socket.SHUT_RDWR)


class Route:
    """A parsed resource URL."""

    def __init__(self, res: Resource, namespace: str, name: str, sub: str) -> None:
        self.res, self.namespace, self.name, self.sub = res, namespace, name, sub


def parse_resource_path(path: str) -> Route | None:
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 2 and parts[0] == "api":
        group, version, rest = "", parts[1], parts[2:]
    elif len(parts) >= 3 and parts[0] == "apis":
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    if (group, version) not in GROUP_VERSIONS or not rest:
        return None
    namespace = ""
    if rest[0] == "namespaces" and len(rest) >= 3:
        candidate = lookup(group, version, rest[2])
        if candidate is not None and candidate.namespaced:
            namespace, rest = rest[1], rest[2:]
    res = lookup(group, version, rest[0])
    if res is None or len(rest) > 3:
        return None
    name = rest[1] if len(rest) > 1 else ""
    sub = rest[2] if len(rest) > 2 else ""
    if sub and res.subresource(sub) is None:
        return None
    if res is NAMESPACES:
        namespace = ""
    return Route(res, namespace, name, sub)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: DoubleHTTPServer

    def setup(self) -> None:
        self.refused = False
        if isinstance(self.request, ssl.SSLSocket):
            try:
                self.request.do_handshake()
            except (ssl.SSLError, OSError):  # the client refused our certificate
                self.refused = True
        super().setup()
        # Headers and body go out in separate writes: without this, Nagle's algorithm
        # and the client's delayed ACK add ~40 ms to every response.
        with contextlib.suppress(OSError):
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        with self.server.connections_lock:
            self.server.connections.add(self.connection)

    def handle(self) -> None:
        if not self.refused:
            super().handle()

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            with self.server.connections_lock:
                self.server.connections.discard(self.connection)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: requests are recorded in ApiServerDouble.requests instead."""

    def _dispatch(self) -> None:
        self._handle(self.command)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _dispatch

    # -- plumbing ------------------------------------------------------------

    def _send(
        self,
        code: int,
        body: bytes,
        content_type: str = "application/json",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.send_response(code)
        self.send_header("Audit-Id", str(uuid.uuid4()))
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Content-Type", content_type)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def _json(self, code: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send(code, json.dumps(obj).encode(), headers=headers)

    def _error(self, err: ApiError) -> None:
        self._json(err.code, err.status(), err.headers)

    def _body(self, content_type: str) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            if content_type.startswith("application/apply-patch+yaml"):
                return yaml.safe_load(raw.decode())
            return json.loads(raw)
        except (ValueError, yaml.YAMLError) as exc:
            raise bad_request(f"the body of the request was in an unknown format: {exc}") from None

    def _handle(self, method: str) -> None:
        double = self.server.double
        url = urlsplit(self.path)
        query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        content_type = self.headers.get("Content-Type") or "application/json"
        try:
            body = (
                self._body(content_type) if method in ("POST", "PUT", "PATCH", "DELETE") else None
            )
            double.requests.append((method, url.path, dict(query), body))
            user = double.auth.authenticate(self.headers.get("Authorization"))
            if self._non_resource(method, url.path):
                return
            route = parse_resource_path(url.path)
            if route is None:
                raise path_not_found()
            self._resource(double, method, route, query, content_type, body, user)
        except ApiError as err:
            self._error(err)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _non_resource(self, method: str, path: str) -> bool:
        double = self.server.double
        if method != "GET":
            return False
        path = path.rstrip("/") or "/"
        if path in ("/healthz", "/livez", "/readyz"):
            self._send(200, b"ok", "text/plain; charset=utf-8")
            return True
        if path == "/version":
            self._json(200, discovery.SERVER_VERSION)
            return True
        if path == "/api":
            self._json(200, discovery.api_versions(f"{double.host}:{double.port}"))
            return True
        if path == "/apis":
            self._json(200, discovery.api_group_list())
            return True
        parts = [p for p in path.split("/") if p]
        if len(parts) == 2 and parts[0] == "apis":
            group_doc = discovery.api_group(parts[1])
            if group_doc is None:
                raise path_not_found()
            self._json(200, group_doc)
            return True
        gv: tuple[str, str] | None = None
        if len(parts) == 2 and parts[0] == "api":
            gv = ("", parts[1])
        elif len(parts) == 3 and parts[0] == "apis":
            gv = (parts[1], parts[2])
        if gv is not None:
            doc = discovery.api_resource_list(*gv)
            if doc is None:
                raise path_not_found()
            self._json(200, doc)
            return True
        if path == "/openapi/v3":
            self._send(200, double.openapi.root())
            return True
        if path.startswith("/openapi/v3/"):
            data = double.openapi.document(path[len("/openapi/v3/") :])
            if data is None:
                raise path_not_found()
            self._send(200, data)
            return True
        if path == "/openapi/v2":
            v2 = double.openapi.v2()
            if v2 is None:
                raise path_not_found()
            self._send(200, v2, "application/com.github.proto-openapi.spec.v2.v1.0+protobuf")
            return True
        return False

    def _resource(
        self,
        double: ApiServerDouble,
        method: str,
        route: Route,
        query: dict[str, str],
        content_type: str,
        body: Any,
        user: str,
    ) -> None:
        res, ns, name, sub = route.res, route.namespace, route.name, route.sub
        if method == "GET" and name and not sub and reads._truthy(query.get("watch")):
            # A watch on one object's URL: the collection with metadata.name (ListResource).
            wanted = query.get("fieldSelector", "")
            if wanted and wanted != f"metadata.name={name}":
                raise bad_request("fieldSelector metadata.name doesn't match requested name")
            query = {**query, "fieldSelector": f"metadata.name={name}"}
            name = ""
        if method == "GET":
            verb = "get" if name else ("watch" if reads._truthy(query.get("watch")) else "list")
        elif method == "DELETE":
            verb = "delete" if name else "deletecollection"
        else:
            verb = VERBS[method]
        allowed = res.subresource(sub).verbs if sub and res.subresource(sub) else res.verbs  # type: ignore[union-attr]
        if (
            verb not in allowed
            or (method == "POST" and name and not sub)
            or (method in ("PUT", "PATCH") and not name)
        ):
            raise method_not_supported(res.name, res.group, verb)
        if res.namespaced and not ns and verb not in ("list", "watch"):
            raise path_not_found()
        double.auth.authorize(user, verb, res.group, res.name, sub, name, ns)
        fault = double.faults.take(verb, res.name, sub, ns, name)
        if fault is not None:
            raise fault
        registry = double.registry
        if verb == "watch":
            session = reads.open_watch(
                registry,
                double.hub,
                res,
                ns,
                query,
                double.default_watch_timeout(),
                double.watch_list_defaulting,
            )
            self._stream(session)
            return
        table = tables.wants_table(self.headers.get("Accept"))
        include = query.get("includeObject", "Metadata")
        if verb == "list":
            listed = reads.list_objects(registry, res, ns, query)
            if table:
                items = [objects.with_type(i, res.kind, res.api_version) for i in listed["items"]]
                listed = tables.to_table(
                    res.store, items, listed["metadata"], double.clock.now(), include
                )
            self._json(200, listed)
            return
        if verb == "get":
            wanted = query.get("resourceVersion", "")
            if wanted not in ("", "0") and reads._parse_rv(wanted) > registry.store.rv:
                raise too_large_resource_version(int(wanted), registry.store.rv)
            got = registry.present(res, registry.get_stored(res, ns, name))
            if table:
                got = tables.to_table(res.store, [got], {}, double.clock.now(), include)
            self._json(200, got)
            return
        if verb == "create" and sub == "binding":
            self._json(201, subresources.bind(registry, ns, name, body))
            return
        if verb == "create" and sub == "eviction":
            self._json(201, subresources.evict(registry, ns, name, body))
            return
        if verb == "create" and res.name == "bindings":
            binding = body if isinstance(body, dict) else {}
            pod = str((binding.get("metadata") or {}).get("name") or "")
            self._json(201, subresources.bind(registry, ns, pod, body))
            return
        if verb == "create":
            self._json(201, registry.present(res, registry.create(res, ns, body)))
            return
        if verb == "update":
            self._json(200, registry.present(res, registry.update(res, ns, name, body, sub)))
            return
        if verb == "patch":
            code, obj = registry.patch(
                res, ns, name, content_type, body, sub, query.get("fieldManager")
            )
            self._json(code, registry.present(res, obj))
            return
        if verb == "delete":
            options = dict(body) if isinstance(body, dict) else {}
            if "gracePeriodSeconds" in query:
                options["gracePeriodSeconds"] = int(query["gracePeriodSeconds"])
            returns_object, obj = registry.delete(res, ns, name, options)
            if returns_object:
                self._json(200, registry.present(res, obj))
            else:
                self._json(200, registry.deleted_status(res, obj))
            return
        if verb == "deletecollection":
            self._json(200, self._delete_collection(res, ns, query, body))
            return
        raise method_not_supported(res.name, res.group, verb)

    def _delete_collection(self, res: Resource, ns: str, query: dict[str, str], body: Any) -> Obj:
        """DeleteCollection: delete each selected object; answer with the list of them."""
        registry = self.server.double.registry
        options = dict(body) if isinstance(body, dict) else {}
        if "gracePeriodSeconds" in query:
            options["gracePeriodSeconds"] = int(query["gracePeriodSeconds"])
        selected = reads.list_objects(
            registry,
            res,
            ns,
            {k: v for k, v in query.items() if k in ("labelSelector", "fieldSelector")},
        )
        items = []
        for item in selected["items"]:
            meta = item["metadata"]
            _, last = registry.delete(res, meta.get("namespace", ""), meta["name"], options)
            items.append(objects.without_type(registry.present(res, last)))
        selected["items"] = items
        selected["metadata"] = {"resourceVersion": str(registry.store.rv)}
        return selected

    def _stream(self, session: Any) -> None:
        double = self.server.double
        self.send_response(200)
        self.send_header("Audit-Id", str(uuid.uuid4()))
        self.send_header("Cache-Control", "no-cache, private")
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        self.close_connection = True
        try:
            while True:
                item = session.items.get()
                if item[0] == "event":
                    data = json.dumps(item[1]).encode() + b"\n"
                    self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                elif item[0] == "end":
                    self.wfile.write(b"0\r\n\r\n")
                    return
                else:
                    with contextlib.suppress(OSError):
                        self.connection.shutdown(socket.SHUT_RDWR)
                    return
        except OSError:
            return
        finally:
            double.hub.close(session)
