"""The one place hookscope.torch makes a shape engine (``hookscope._engine.ShapeEngine``): set up with an observer's
options (the observed signature, value_if_missing, the inputs remove_inputs removed) and fed calls in the record
encoding. The observer's own engine and the engines of its subsets (select, phases) are all made here, so that they
all agree on what the options mean."""
from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

from .. import _engine
from ._codec import to_value


def new_engine(signature: list[dict] | None, value_if_missing: Mapping[str | int, Any], calls: Iterable[str] = (),
               removed: Iterable[str] = ()) -> tuple[_engine.ShapeEngine, list[int]]:
    """(an engine recording with these options, the indexes of ``calls`` it kept). ``signature``: the record
    format's (``_codec.signature_json``); ``calls``: record encodings of calls (``{"args":...,"kwargs":...}``), added
    in order after one ``begin_recording``; ``removed``: names forgotten once calls are kept (the stored calls hold
    them as observed). The engine keeps every call: the caller keeps the limit, as the observer does with its
    reservations."""
    engine = _engine.ShapeEngine(store_n_calls=None)
    engine.set_parameters(json.dumps(signature))
    for key, v in value_if_missing.items():
        engine.value_if_missing(key, json.dumps(to_value(v)[0]))
    engine.begin_recording()
    kept = [i for i, call in enumerate(calls) if engine.add_call(call)]
    removed = sorted(removed)
    if removed and kept:
        engine.remove_inputs(removed)
    return engine, kept
