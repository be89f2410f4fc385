"""Names the controllers generate, as the API server and upstream controllers do.

``random_suffix`` is the ``generateName`` suffix (5 characters of utilrand's
alphabet) from the caller's seeded source; ``template_hash`` stands in for
``pod-template-hash`` / ``controller-revision-hash``.
"""

from __future__ import annotations

import hashlib
import random

# utilrand's alphabet: no vowels, no confusable characters.
ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def random_suffix(rng: random.Random, n: int = 5) -> str:
    return "".join(rng.choice(ALPHANUMS) for _ in range(n))


def template_hash(key: str) -> str:
    """A stable pod-template-hash (upstream hashes the Go-encoded template with
    FNV-32a; kubesched hashes the workload's identity, stable across runs)."""
    digest = int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big")
    out = []
    for _ in range(10):
        digest, r = divmod(digest, len(ALPHANUMS))
        out.append(ALPHANUMS[r])
    return "".join(out)
