"""Dynamic shapes from record shards on a Dask cluster: each shard is summarised in a worker (the compiled engine,
``hookscope.summarize``), the summaries are merged in the driver in shard order (``hookscope.merge_summaries``),
which gives exactly what one pass over the shards, concatenated in that order, gives.

    >>> from dask.distributed import Client, LocalCluster
    >>> import hookscope.distributed
    >>> with LocalCluster(n_workers=4, threads_per_worker=1) as cluster, Client(cluster) as client:
    ...     ds = hookscope.distributed.infer(client, shards, function="Model::forward", dim_names=True)

The shards are paths the workers can read (a shared file system), each a record file whose first record of the
function carries its signature (as every file ``HOOKSCOPE_RECORD`` or ``InputObserver.write_records`` writes does).
A summary is bounded whatever the number of calls (about 0.6 MB for 10,000 LLM-like calls, most of it the distinct
calls kept whole for the relations and profiles), so the driver receives little.
"""
from __future__ import annotations

import os
from typing import Any, Mapping, Sequence

from . import DynamicShapes, ShapeEngine, merge_summaries, shapes_options, summarize


def summaries(client, shards: Sequence[str | os.PathLike], *, function: str | None = None,
              value_if_missing: Mapping[str | int, Any] | None = None) -> list[str]:
    """The summary of every shard, computed in the workers, in shard order."""
    paths = [os.fspath(s) for s in shards]
    futures = client.map(summarize, paths, function=function, value_if_missing=value_if_missing)
    return client.gather(futures)


def load(client, shards, *, function: str | None = None,
         value_if_missing: Mapping[str | int, Any] | None = None) -> ShapeEngine:
    """The engine of every call of the shards (``hookscope.load(shards, store_n_calls=None)``, computed on the
    cluster)."""
    return merge_summaries(summaries(client, shards, function=function, value_if_missing=value_if_missing))


def infer(client, shards, *, function: str | None = None, value_if_missing: Mapping[str | int, Any] | None = None,
          batch=None, batch_all: bool = False, dim_names=False, profiles: str | int = 1) -> DynamicShapes:
    """``hookscope.infer(shards, store_n_calls=None, ...)`` with the shards summarised on the cluster."""
    engine = load(client, shards, function=function, value_if_missing=value_if_missing)
    return engine.infer_dynamic_shapes(**shapes_options(batch, batch_all, dim_names, profiles))
