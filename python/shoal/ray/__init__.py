"""shoal on Ray (the optional extra ``shoal[ray]``): a collection served by
N actors.

    import numpy as np, ray, shoal.ray

    ray.init()
    coll = shoal.ray.serve("/data/coll", 2, dim=128, metric="cosine")
    coll.put_batch(np.arange(1000), np.random.rand(1000, 128).astype(np.float32))
    ids, distances = coll.search_batch(np.random.rand(5, 128).astype(np.float32), k=10)
    coll.close()

    # Segments built in parallel tasks (each reads its own input), then ingested:
    shoal.ray.build("/data/base.fbin", coll_or_collection, workers=2)
    shoal.ray.build(ray.data.read_parquet("/data/docs/"), coll_or_collection,
                    vector_column="emb", id_column="id", label_column="tags")

Each actor owns one part: a shoal database directory holding the records
whose id hashes to it (splitmix64(id) % N), durable in that part's logs.
Searches go to every part and their top-k are merged exactly. An actor
whose process dies is restarted by Ray and reopens its directory, losing
nothing it acknowledged.

Modules, one job each: ``_routing`` (id -> part, splitting a batch),
``_merge`` (the exact top-k merge), ``_layout`` (the directory and its
layout file), ``_part`` (the actor), ``_served`` (serve and
ShardedCollection); the distributed build: ``_source`` (the input files,
memory-mapped by each task), ``_dataset`` (a Ray Dataset input: its
columns, checked, and its blocks routed to the tasks), ``_shards`` (the
engine's id -> shard), ``_plan`` (which task builds which rows),
``_build`` (``build``: segments built in Ray tasks, then ingested).
"""

try:
    import ray as _ray  # noqa: F401
except ImportError as e:  # pragma: no cover - depends on the environment
    raise ImportError("shoal.ray needs Ray: pip install 'shoal[ray]'") from e

from ._build import build
from ._routing import part_of, splitmix64
from ._served import ShardedCollection, serve
from ._shards import shard_of

__all__ = ["ShardedCollection", "build", "part_of", "serve", "shard_of", "splitmix64"]
