"""A test double of kube-apiserver v1.36 that speaks the real wire protocol.

Independent of the scheduler (import-linter forbids it to import the rest of
kubesched): tests and benchmarks of live mode point a real client at it. See
`server.ApiServerDouble` for the entry point.
"""

from kubesched.live.apiserver_double.auth import Auth, Rule
from kubesched.live.apiserver_double.clock import Clock, ManualClock, RealClock
from kubesched.live.apiserver_double.errors import ApiError
from kubesched.live.apiserver_double.faults import Fault, binding_lost, server_error, throttled
from kubesched.live.apiserver_double.server import ApiServerDouble

__all__ = [
    "ApiError",
    "ApiServerDouble",
    "Auth",
    "Clock",
    "Fault",
    "ManualClock",
    "RealClock",
    "Rule",
    "binding_lost",
    "server_error",
    "throttled",
]
