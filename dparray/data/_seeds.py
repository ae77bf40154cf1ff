"""Seeds for the data pipeline, derived from one loader seed: a pure function of where they
are used, so an epoch's order or a batch's random draws never depend on what ran before."""

from __future__ import annotations

import hashlib


def derive_seed(seed: int, *path: object) -> int:
    """A 63-bit seed fixed by ``seed`` and ``path`` (say ``("shuffle", epoch)``): equal inputs
    give equal seeds in every process and on every platform; different inputs, unrelated ones.
    """
    text = ":".join(str(part) for part in ("dparray.data", seed, *path))
    digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def fresh_seed() -> int:
    """A new seed from the current random streams, for a loader or split given none: fixed by
    ``dparray.manual_seed`` and different for each caller, without drawing from any generator
    (so the model's random numbers do not change)."""
    from dparray import random as _random

    return _random.current_streams().spawn(1)[0]
