"""Live mode: the only package that talks to a real API server (a later issue)."""
