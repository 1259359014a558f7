"""What identifies a cache entry: the dataset index it holds and its cache's key.

Each file (:mod:`rankaug.cache._format`) records both, and every read checks them
against the index and key it reads for, so an entry copied under another index or
into another cache (entry ``i`` holding sample ``j``'s bytes, whole and with a good
checksum) is damaged, never served: ``CachedDataset`` stores the sample again, and
``python -m rankaug cache verify`` reports it. Files of the older format
(:data:`OLDER`, without them) are refused as such; the fingerprint's ``FORMAT`` changed
with it, so a ``CachedDataset`` keys a new cache rather than reading an old one.
"""

from __future__ import annotations

from typing import Final

__all__ = ["OLDER", "key_bytes", "mismatch", "older"]

#: The magic of the format before entries recorded their index and cache key.
OLDER: Final = b"RKCACHE\x02"


def key_bytes(key: str | None) -> bytes:
    """A cache key's 16 bytes (its 32 hex digits), zeros for ``None``.

    >>> key_bytes("00ff" * 8).hex() == "00ff" * 8, key_bytes(None) == bytes(16)
    (True, True)
    """
    return bytes(16) if key is None else bytes.fromhex(key)


def older(path: str) -> str:
    """The message for an entry of the older format."""
    return (
        f"{path}: an entry of an older rankaug cache format (RKCACHE 2, which does not "
        "record the index it holds): delete the cache (CachedDataset.prune() removes old "
        "fingerprints' folders; this version keys a new cache)"
    )


def mismatch(path: str, held: tuple[int, bytes], expected: tuple[int, str | None]) -> str | None:
    """Why an entry holding ``held`` (index, key) is not ``expected``'s; ``None`` if it is.

    ``expected``'s key ``None`` accepts any key; the message names it where it differs.

    >>> print(mismatch("c/0/3.sample", (5, bytes(16)), (3, None)))  # doctest: +ELLIPSIS
    c/0/3.sample: holds dataset[5] of the cache 000...000, not dataset[3] (copied or ...
    >>> mismatch("c/0/3.sample", (3, bytes(16)), (3, None)) is None
    True
    """
    index, key = held
    wanted_index, wanted = expected
    foreign = wanted is not None and key != key_bytes(wanted)
    if index == wanted_index and not foreign:
        return None
    return (
        f"{path}: holds dataset[{index}] of the cache {key.hex()}, not dataset[{wanted_index}]"
        + (f" of the cache {wanted}" if foreign else "")
        + " (copied or moved from elsewhere): not served"
    )
