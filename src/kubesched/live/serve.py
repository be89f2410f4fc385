"""``kubesched run``'s HTTP endpoints: ``/metrics`` (Prometheus text, upstream's
metric names), ``/healthz`` and ``/livez`` (the process serves), ``/readyz``
(the caches have synced and this instance leads, or runs without leader
election).

The metrics are read from the scheduler's ``Metrics`` at each scrape by a
prometheus-client collector (the scheduler core keeps its own small registry,
the one the simulator reports): ``scheduler_schedule_attempts_total{result,
profile}``, ``scheduler_preemption_attempts_total``,
``scheduler_preemption_victims``, ``scheduler_pod_scheduling_attempts``,
``scheduler_queue_incoming_pods_total{queue, event}``,
``scheduler_pending_pods{queue}`` (from the queue itself) and client-go's
``leader_election_master_status{name}``; ``LiveRun`` adds kubesched's own
``kubesched_events_*`` (``live.events``) and ``kubesched_shadow_*``
(``live.shadow``). Plain HTTP (upstream serves HTTPS
with authentication on port 10259): bind it to an address only the scraper
reaches.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

from kubesched.scheduler.metrics import (
    PENDING_PODS,
    POD_SCHEDULING_ATTEMPTS,
    PREEMPTION_ATTEMPTS,
    PREEMPTION_VICTIMS,
    QUEUE_INCOMING_PODS,
    SCHEDULE_ATTEMPTS,
    Histogram,
    Metrics,
)

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def _histogram(name: str, doc: str, h: Histogram) -> HistogramMetricFamily:
    buckets = [(str(float(b)), float(c)) for b, c in zip(h.buckets, h.counts, strict=True)]
    buckets.append(("+Inf", float(h.count)))
    return HistogramMetricFamily(name, doc, buckets=buckets, sum_value=h.sum)


class SchedulerCollector(Collector):
    """The scheduler's metrics at scrape time (see the module docstring)."""

    def __init__(
        self,
        metrics: Metrics,
        pending: Callable[[], dict[str, int]],
        leader: Callable[[], tuple[str, bool] | None],
    ) -> None:
        self.metrics = metrics
        self.pending = pending
        self.leader = leader

    def collect(self) -> Iterable[Metric]:
        m = self.metrics
        attempts = CounterMetricFamily(
            SCHEDULE_ATTEMPTS.removesuffix("_total"),
            "Number of attempts to schedule pods, by the result.",
            labels=["result", "profile"],
        )
        for (result, profile), n in sorted(dict(m.schedule_attempts_by_profile).items()):
            attempts.add_metric([result, profile], n)
        yield attempts
        yield CounterMetricFamily(
            PREEMPTION_ATTEMPTS.removesuffix("_total"),
            "Total preemption attempts in the cluster till now",
            value=m.preemption_attempts,
        )
        yield _histogram(
            PREEMPTION_VICTIMS,
            "Number of selected preemption victims",
            m.preemption_victims_histogram,
        )
        yield _histogram(
            POD_SCHEDULING_ATTEMPTS,
            "Number of attempts to successfully schedule a pod.",
            m.pod_scheduling_attempts,
        )
        incoming = CounterMetricFamily(
            QUEUE_INCOMING_PODS.removesuffix("_total"),
            "Number of pods added to scheduling queues by event and queue type.",
            labels=["queue", "event"],
        )
        for (queue, event), n in sorted(dict(m.queue_incoming).items()):
            incoming.add_metric([queue, event], n)
        yield incoming
        pending = GaugeMetricFamily(
            PENDING_PODS,
            "Number of pending pods, by the queue type.",
            labels=["queue"],
        )
        for queue, n in sorted(self.pending().items()):
            pending.add_metric([queue], n)
        yield pending
        lead = self.leader()
        if lead is not None:
            status = GaugeMetricFamily(
                "leader_election_master_status",
                "Gauge of if the reporting system is master of the relevant lease, 0 indicates "
                "backup, 1 indicates master. 'name' is the string used to identify the lease.",
                labels=["name"],
            )
            status.add_metric([lead[0]], 1.0 if lead[1] else 0.0)
            yield status


class StatusServer:
    """The endpoints on ``host:port`` (port 0: any free port, see ``port``)."""

    def __init__(
        self, host: str, port: int, collectors: list[Collector], ready: Callable[[], str]
    ) -> None:
        """``ready()`` returns "" when ready, else why not."""
        registry = CollectorRegistry(auto_describe=False)
        for collector in collectors:
            registry.register(collector)
        self.registry = registry
        self.ready = ready
        self._http = ThreadingHTTPServer((host, port), _handler(self))
        self._http.daemon_threads = True
        self._thread = threading.Thread(
            target=self._http.serve_forever, name="status-server", daemon=True
        )

    @property
    def port(self) -> int:
        return int(self._http.server_address[1])

    def start(self) -> StatusServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._http.shutdown()
        self._http.server_close()


def _handler(server: StatusServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                self._send(200, generate_latest(server.registry), CONTENT_TYPE)
            elif path in ("/healthz", "/livez"):
                self._send(200, b"ok", "text/plain")
            elif path == "/readyz":
                why = server.ready()
                if why:
                    self._send(500, f"[-]{why}\nreadyz check failed".encode(), "text/plain")
                else:
                    self._send(200, b"ok", "text/plain")
            else:
                self._send(404, b"404 page not found\n", "text/plain")

        def _send(self, code: int, body: bytes, content_type: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: scrapes are not worth a log line each."""

    return Handler
