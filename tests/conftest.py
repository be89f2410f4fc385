"""Suite-wide pytest setup: the Hypothesis profile (see ``tests/hypothesis_profiles.py``)."""

from __future__ import annotations

from hypothesis import settings

from tests.hypothesis_profiles import active

settings.load_profile(active())


def pytest_report_header() -> str:
    return f"hypothesis profile: {active()}"
