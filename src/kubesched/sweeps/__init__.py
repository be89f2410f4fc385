"""Parameter sweeps on Dask: many deterministic simulations, one table.

A sweep is the cartesian product of configurations, swept parameters and seeds
(:mod:`~kubesched.sweeps.plan`); every combination is one
:class:`~kubesched.sim.runspec.RunSpec`, run on a Dask cluster
(:mod:`~kubesched.sweeps.engine`) exactly as ``kubesched simulate`` runs it, and
its figures become one row (:mod:`~kubesched.sweeps.table`), summarised per
configuration with mean and 95 % confidence interval (:mod:`~kubesched.sweeps.stats`).

The Python entry point is ``kubesched.sweep`` (:func:`kubesched.sweeps.api.sweep`);
the command line is ``kubesched sweep``. Dask, pandas and pyarrow come with the
optional extra ``kubesched[sweep]``; importing this package needs none of them,
:func:`require` says which are missing.
"""

from __future__ import annotations

import importlib.util
from typing import Final

EXTRA: Final = ("distributed", "pandas", "pyarrow")
"""The modules of the ``sweep`` extra (``pip install 'kubesched[sweep]'``)."""


def missing() -> list[str]:
    """The modules of :data:`EXTRA` that are not installed."""
    return [m for m in EXTRA if importlib.util.find_spec(m) is None]


def require() -> None:
    """ImportError, in one line naming the extra, unless its modules are installed."""
    absent = missing()
    if absent:
        raise ImportError(
            f"kubesched sweep needs the optional dependencies of the sweep extra "
            f"(missing: {', '.join(absent)}): pip install 'kubesched[sweep]'"
        )
