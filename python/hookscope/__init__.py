"""hookscope: dynamic shapes for torch.export, TensorRT and ONNX Runtime from recorded calls.

The compiled shape engine (``hookscope._engine``, the C++ library) does the inference; this package reads
record files (``HOOKSCOPE_RECORD``, ``call_recorder`` or any producer of docs/record_format.md) and, in
``hookscope.torch``, observes a ``torch.nn.Module``.

    >>> import hookscope
    >>> hookscope.infer(["forward.jsonl"], dim_names=True).to_json()  # what `hookscope-shapes infer` prints
"""
from __future__ import annotations

import json
import os
from typing import Any, Iterable, Mapping, Sequence

from . import _engine
from ._engine import FormatError, InferenceError, RecordError, ValueKindError, ShapeEngine, DynamicShapes

__all__ = [
    "FormatError",
    "RecordError",
    "InferenceError",
    "ValueKindError",
    "ShapeEngine",
    "DynamicShapes",
    "read_records",
    "load",
    "infer",
    "infer_arguments",
    "summarize",
    "merge_summaries",
]


def _paths(paths: str | os.PathLike | Iterable[str | os.PathLike]) -> list[str]:
    if isinstance(paths, (str, os.PathLike)):
        return [os.fspath(paths)]
    return [os.fspath(p) for p in paths]


def read_records(paths, *, with_warnings: bool = False):
    """Every record of the files (read as one stream: a function's signature binds across files), each as a dict
    of the record format (``function``, ``signature``, ``args``, ``kwargs``, ``result``, ``threw``, ``latency_ns``;
    values in the record format's JSON encoding). A bad line raises RecordError("<file>:<line>: ..."), the
    sentence ``hookscope-shapes`` prints. ``with_warnings=True`` returns ``(records, warnings)``."""
    lines, warnings = _engine.read_records(_paths(paths))
    records = [json.loads(line) for line in lines]
    return (records, list(warnings)) if with_warnings else records


def _value_json(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def load(paths, *, function: str | None = None, store_n_calls: int | None = 3,
         value_if_missing: Mapping[str | int, Any] | None = None) -> ShapeEngine:
    """A ShapeEngine fed with the records of one function, as ``hookscope-shapes`` feeds it (``store_n_calls=None``:
    every call, summarised). ``value_if_missing`` values are in the JSON encoding (a dict or a JSON string)."""
    missing = [(k, _value_json(v)) for k, v in (value_if_missing or {}).items()]
    engine, _warnings, _function = _engine.load_engine(_paths(paths), function, store_n_calls, missing)
    return engine


def summarize(paths, *, function: str | None = None,
              value_if_missing: Mapping[str | int, Any] | None = None) -> str:
    """``hookscope-shapes summarize`` as a function: the summary document (JSON text, docs/summary_format.md) of
    every call of one function in the record files (with ``function`` given, a shard without its calls gives an
    empty summary, which merges as nothing). Summaries of shards merge (``merge_summaries``) into exactly
    what one pass over the shards, concatenated in order, gives: what a map-reduce engine calls in its workers."""
    missing = [(k, _value_json(v)) for k, v in (value_if_missing or {}).items()]
    engine, _warnings, name = _engine.load_engine(_paths(paths), function, None, missing, function is not None)
    return engine.to_summary_json(name)


def merge_summaries(summaries: Iterable[str]) -> ShapeEngine:
    """The engine of the summaries (JSON texts, in the order of their shards) merged: infer from it as from
    ``load(shards, store_n_calls=None)``. Summaries of another function or recorded differently (signature,
    value_if_missing) raise InferenceError saying which."""
    merged = ShapeEngine(store_n_calls=None, keep_calls=False)
    function = None
    for i, text in enumerate(summaries):
        engine, name = ShapeEngine.from_summary_json(text)
        if engine.num_obs > 0 and function is not None and name != function:
            raise InferenceError(f"hookscope: merge_summaries: summary {i} is of '{name}', the earlier ones of "
                                 f"'{function}'")
        if engine.num_obs > 0:
            function = name
        merged.merge(engine)
    return merged


def _dim_labels(dim_names) -> list[tuple[str | int, int, str]]:
    """{input: {dim: label}} (the reference's dim_names mapping) as the engine's explicit labels."""
    out = []
    for key, dims in dim_names.items():
        for d, label in dims.items():
            out.append((key, int(d), str(label)))
    return out


def shapes_options(batch=None, batch_all: bool = False, dim_names=False, profiles: str | int = 1) -> dict:
    """The engine's dynamic_shapes_options from Python spellings: ``batch`` a set of names/positions or True;
    ``dim_names`` False, True (automatic labels) or {input: {dim: label}}; ``profiles`` 1 (one consistent TensorRT
    profile) or "auto" (one per phase, e.g. prefill and decode)."""
    if profiles not in (1, "1", "auto"):
        raise ValueError(f"hookscope: profiles: expected 1 or 'auto', got {profiles!r}")
    if batch is True:
        batch, batch_all = None, True
    options = {
        "batch_dimension_for": [str(k) for k in (batch or ())],
        "batch_all": bool(batch_all),
        "dim_names": dim_names is True,
        "dim_labels": [] if isinstance(dim_names, bool) or dim_names is None else _dim_labels(dim_names),
        "profile_phases": profiles == "auto",
    }
    return options


def infer(paths, *, function: str | None = None, store_n_calls: int | None = 3,
          value_if_missing: Mapping[str | int, Any] | None = None, batch=None, batch_all: bool = False,
          dim_names=False, profiles: str | int = 1) -> DynamicShapes:
    """``hookscope-shapes infer`` as a function: the DynamicShapes of the records (``.to_json()`` = --format torch,
    ``.to_trtexec()``, ``.to_ort_options()``, ``.to_onnx()``, ``.to_typed_json()`` = --typed, ``.report()``;
    ``.inputs``, ``.outputs``, ``.relations``, ``.tensorrt_profiles``, ``.warnings``)."""
    engine = load(paths, function=function, store_n_calls=store_n_calls, value_if_missing=value_if_missing)
    return engine.infer_dynamic_shapes(**shapes_options(batch, batch_all, dim_names, profiles))


def infer_arguments(paths, *, function: str | None = None, store_n_calls: int | None = 3,
                    value_if_missing: Mapping[str | int, Any] | None = None, index: int | None = None,
                    flat: bool = False, as_args_kwargs: bool = False, avoid_specialization: bool = False):
    """``hookscope-shapes args`` as a function: the representative arguments in the JSON encoding (parsed).
    With avoid_specialization, the first stored call whose dynamic dims are all >= 2 (the warnings are dropped:
    use ShapeEngine.infer_arguments for them)."""
    engine = load(paths, function=function, store_n_calls=store_n_calls, value_if_missing=value_if_missing)
    if avoid_specialization:
        text, _warnings = engine.infer_arguments(index, flat, as_args_kwargs, True)
        return json.loads(text)
    return json.loads(engine.infer_arguments(index, flat, as_args_kwargs))
