"""kubesched: the Kubernetes scheduler's priority and preemption system, in Python.

Layers (each may import only those to its right):
``cli -> {sim, live} -> scheduler -> {runtime, plugins} -> framework -> api``.
The library is importable without the CLI; see ``kubesched.sim`` for the
embedded simulated cluster.
"""

__version__ = "0.1.0"
