"""Hypothesis profiles: ``dev`` locally, ``ci`` under CI, and ``scaled(n)``.

``tests/conftest.py`` loads the profile named by ``HYPOTHESIS_PROFILE``; unset, it
is ``ci`` when ``CI`` is set (``.ci/run`` exports ``CI=1``, and ``scripts/check``
then exports ``HYPOTHESIS_PROFILE=ci``), else ``dev``.

- ``ci``: Hypothesis' defaults and every test's own ``max_examples`` — the numbers
  the suite always ran with.
- ``dev``: a tenth of the examples (at least 10), no deadline, and derandomized:
  the same examples on every run, so a local run is quick and repeatable; CI's
  random search still finds what the fixed examples miss.

A test that sets ``max_examples`` itself overrides any profile, so it writes
``settings(max_examples=scaled(300))``: 300 under ``ci``, 30 under ``dev``.
"""

from __future__ import annotations

import os

from hypothesis import settings

PROFILES = ("dev", "ci")
DEV_DIVISOR = 10
DEV_MIN_EXAMPLES = 10
CI_DEFAULT_EXAMPLES = 100
"""Hypothesis' default ``max_examples``."""

settings.register_profile("ci", max_examples=CI_DEFAULT_EXAMPLES, print_blob=True)
settings.register_profile(
    "dev",
    max_examples=max(DEV_MIN_EXAMPLES, CI_DEFAULT_EXAMPLES // DEV_DIVISOR),
    deadline=None,
    derandomize=True,
)


def active() -> str:
    """The profile to run: ``$HYPOTHESIS_PROFILE``, else ``ci`` under CI, else ``dev``."""
    name = os.environ.get("HYPOTHESIS_PROFILE", "")
    if not name:
        ci = os.environ.get("CI", "").strip().lower()
        name = "ci" if ci not in ("", "0", "false", "no") else "dev"
    if name not in PROFILES:
        raise ValueError(f"HYPOTHESIS_PROFILE={name!r}: known profiles are {', '.join(PROFILES)}")
    return name


def scaled(n: int) -> int:
    """``n`` examples under ``ci``; a tenth of them (at least 10) under ``dev``."""
    if active() == "ci":
        return n
    return max(DEV_MIN_EXAMPLES, n // DEV_DIVISOR)
