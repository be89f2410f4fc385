"""kubesched: the Kubernetes scheduler's priority and preemption system, in Python.

Layers (each may import only those to its right):
``cli -> {sim, live} -> scheduler -> {runtime, plugins} -> framework -> api``.
The library is importable without the CLI; see ``kubesched.sim`` for the
embedded simulated cluster.
"""

__version__ = "0.1.0"

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kubesched.sweeps.api import sweep as sweep


def __getattr__(name: str) -> Any:
    """``kubesched.sweep`` (:func:`kubesched.sweeps.api.sweep`), imported on first
    use: ``import kubesched`` imports neither Dask nor pandas."""
    if name == "sweep":
        from kubesched.sweeps.api import sweep

        return sweep
    raise AttributeError(f"module 'kubesched' has no attribute {name!r}")
