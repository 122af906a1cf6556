"""The engine's shard of an id, in numpy: ``xxh3_64(id as 8 little-endian
bytes) % shard_count`` (src/util/hash.h, ShardOf).

A distributed build gives each task a set of shards and lets it keep only
their rows, so it must route exactly as the engine (and SegmentWriter)
does: a row sent to the wrong shard's file is refused by ingest_segments.
For an 8-byte input with seed 0, XXH3_64bits is XXH3_len_4to8_64b (xxhash
0.8, the library's own code): a rotation, a xor with two words of the
default secret, and the rrmxmx mix. test_ray_build checks it against
SegmentWriter's routing.
"""

from __future__ import annotations

import numpy as np

# XXH3_kSecret[8:16] ^ XXH3_kSecret[16:24], read little-endian.
_BITFLIP = np.uint64(int.from_bytes(bytes.fromhex("7c01812cf721ad1c"), "little")
                     ^ int.from_bytes(bytes.fromhex("ded46de9839097db"), "little"))
_MX2 = np.uint64(0x9FB21C651E98DF25)
_LEN = np.uint64(8)


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint64(r)) | (x >> np.uint64(64 - r))


def xxh3_of_ids(ids: np.ndarray) -> np.ndarray:
    """XXH3_64bits of each uint64 of `ids` as its 8 little-endian bytes."""
    x = np.asarray(ids, dtype=np.uint64)
    # input64 = high half + (low half << 32): the id rotated by 32.
    h = _rotl(x, 32) ^ _BITFLIP
    h = h ^ _rotl(h, 49) ^ _rotl(h, 24)
    h = h * _MX2  # uint64 arrays wrap mod 2**64
    h = h ^ ((h >> np.uint64(35)) + _LEN)
    h = h * _MX2
    return h ^ (h >> np.uint64(28))


def shard_of(ids: np.ndarray, shard_count: int) -> np.ndarray:
    """The shard (an int64 in [0, shard_count)) of each id of `ids`."""
    return (xxh3_of_ids(ids) % np.uint64(shard_count)).astype(np.int64)
