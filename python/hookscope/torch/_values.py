"""The observer's values: torch objects in the record format's encoding (to_value), snapshots of the tensors they
hold, and the way back (placeholders, copies, registered nodes rebuilt with their own type)."""
from __future__ import annotations

import base64
import inspect
import math
from typing import Any

import torch
import torch.utils._pytree as _pytree

DTYPES = {
    torch.float64: "float64",
    torch.float32: "float32",
    torch.float16: "float16",
    torch.bfloat16: "bfloat16",
    torch.int64: "int64",
    torch.int32: "int32",
    torch.int16: "int16",
    torch.int8: "int8",
    torch.uint8: "uint8",
    torch.bool: "bool",
}
_TORCH_DTYPES = {name: t for t, name in DTYPES.items()}


class _Struct:
    """A snapshot of a pytree node that is not a tuple, list or dict: how to rebuild it, and its children."""

    __slots__ = ("type", "context", "names", "children")

    def __init__(self, type_, context, names, children):
        self.type, self.context, self.names, self.children = type_, context, names, children


def _text(s: str) -> Any:
    """A str in the record format: itself, or {"base64": ...} of its bytes when it holds surrogates (what
    decode_text gives for C++ bytes that are not UTF-8), which no strict JSON parser reads as text."""
    try:
        s.encode("utf-8")
        return s
    except UnicodeEncodeError:
        return {"base64": base64.b64encode(s.encode("utf-8", "surrogateescape")).decode("ascii")}


def _key_name(key, i: int) -> str:
    for attr in ("key", "name", "idx"):
        if hasattr(key, attr):
            return str(getattr(key, attr))
    return str(i)


def to_value(obj: Any) -> tuple[Any, Any]:
    """(the record format's JSON encoding of obj, a snapshot holding its tensors) — the snapshot is what
    infer_arguments rebuilds real arguments from; containers are copied, tensors are not."""
    if isinstance(obj, torch.Tensor):
        name = DTYPES.get(obj.dtype)
        if name is None:
            raise TypeError(f"hookscope: tensors of dtype {obj.dtype} cannot be recorded (the record format has "
                            f"{', '.join(DTYPES.values())})")
        return {"shape": list(obj.shape), "dtype": name}, obj
    if obj is None:
        return None, None
    if isinstance(obj, bool):
        return {"bool": obj}, obj
    if isinstance(obj, int):
        return {"int": obj}, obj
    if isinstance(obj, float):
        return {"float": obj if math.isfinite(obj) else repr(obj)}, obj  # "nan", "inf", "-inf": JSON has no such number
    if isinstance(obj, str):
        return {"str": _text(obj)}, obj
    if isinstance(obj, (bytes, bytearray)):
        return {"bytes": base64.b64encode(obj).decode("ascii")}, obj
    if type(obj) is tuple or type(obj) is list:
        pairs = [to_value(x) for x in obj]
        tag = "tuple" if type(obj) is tuple else "list"
        return {tag: [p[0] for p in pairs]}, type(obj)(p[1] for p in pairs)
    if type(obj) is dict:
        pairs = {str(k): to_value(v) for k, v in obj.items()}
        return {"dict": [[_text(k), p[0]] for k, p in pairs.items()]}, {k: p[1] for k, p in pairs.items()}
    node = _pytree.SUPPORTED_NODES.get(type(obj))
    if node is not None:  # a registered node (a cache, a namedtuple, a ModelOutput, ...): one level at a time
        if node.flatten_with_keys_fn is not None:  # one flatten (transformers' caches build a whole context in it)
            keyed, context = node.flatten_with_keys_fn(obj)
            children = [c for _, c in keyed]
            names = [_key_name(k, i) for i, (k, _) in enumerate(keyed)]
        else:
            children, context = node.flatten_fn(obj)
            if isinstance(context, (list, tuple)) and len(context) == len(children) and all(
                    isinstance(c, str) for c in context):
                names = list(context)
            else:
                names = [str(i) for i in range(len(children))]
        pairs = [to_value(c) for c in children]
        encoded = {"struct": type(obj).__name__, "fields": [[n, p[0]] for n, p in zip(names, pairs)]}
        return encoded, _Struct(type(obj), context, names, [p[1] for p in pairs])
    hint = ""
    if type(obj).__module__.startswith("transformers."):
        hint = (" (transformers' caches: transformers.exporters.exporter_dynamo.register_cache_pytrees_for_model(model), "
                "which torch.export needs too)")
    raise TypeError(f"hookscope: cannot record a value of type {type(obj).__qualname__}: register it as a pytree "
                    f"node (torch.utils._pytree.register_pytree_node){hint} or pass tensors, scalars and containers")


def _signature_json(sig: inspect.Signature) -> list[dict]:
    """The signature in the record format. A default that is not a scalar or None is recorded as None."""
    out = []
    for p in sig.parameters.values():
        entry: dict[str, Any] = {"name": p.name}
        if p.kind == inspect.Parameter.VAR_POSITIONAL:
            entry["kind"] = "var_positional"
        elif p.kind == inspect.Parameter.VAR_KEYWORD:
            entry["kind"] = "var_keyword"
        elif p.default is not inspect.Parameter.empty:
            d = p.default
            entry["default"] = to_value(d)[0] if d is None or isinstance(d, (bool, int, float, str)) else None
        out.append(entry)
    return out


def _placeholder(spec: dict) -> torch.Tensor:
    return torch.zeros(spec["shape"], dtype=_TORCH_DTYPES[spec["dtype"]])


def _copy(snap: Any) -> Any:
    """A snapshot with its tensors copied (detached clones)."""
    if isinstance(snap, torch.Tensor):
        return snap.detach().clone()
    if isinstance(snap, _Struct):
        return _Struct(snap.type, snap.context, snap.names, [_copy(c) for c in snap.children])
    if type(snap) in (tuple, list):
        return type(snap)(_copy(c) for c in snap)
    if type(snap) is dict:
        return {k: _copy(v) for k, v in snap.items()}
    return snap


def _materialize(snap: Any) -> Any:
    """A snapshot as the objects the model received (a registered node rebuilt with its own type)."""
    if isinstance(snap, _Struct):
        return _pytree.SUPPORTED_NODES[snap.type].unflatten_fn([_materialize(c) for c in snap.children], snap.context)
    if type(snap) in (tuple, list):
        return type(snap)(_materialize(c) for c in snap)
    if type(snap) is dict:
        return {k: _materialize(v) for k, v in snap.items()}
    return snap
