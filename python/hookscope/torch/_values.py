"""The observer's values: a call's arguments flattened once into leaves and a structure key, the record format's
encoding of that structure built once per key (a text template the leaves fill), and the way back (the same
objects rebuilt with their exact types from the key, the leaves and the registered nodes' contexts).

Every value torch's pytree accepts is recorded: tuples, lists and dicts of any keys, namedtuples, OrderedDict,
defaultdict, deque, registered nodes (dataclasses, transformers caches); leaves are tensors, None, bools, ints (an int
beyond 64 bits is recorded as the text of its digits), floats (nan and inf as the format's strings), str (text that
is not UTF-8 as base64) and bytes. Anything else raises Unrecordable, naming the value's path.
"""
from __future__ import annotations

import base64
import inspect
import json
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
_INT64 = (-(2 ** 63), 2 ** 63)


class Unrecordable(TypeError):
    """A value the record format cannot hold; ``path`` names where it is (``kwargs.past.0``)."""

    def __init__(self, message: str, path: str):
        super().__init__(f"hookscope: {path}: {message}")
        self.path = path


_NONE = "N"
_SCALARS = (bool, int, float, str, bytes)
_Tensor = torch.Tensor


def _hashable(context):
    """A registered node's context as part of a structure key; None when it cannot be hashed (the node's field names
    then stand for it)."""
    try:
        hash(context)
        return context
    except TypeError:
        pass
    if isinstance(context, (list, tuple)):
        items = [_hashable(c) for c in context]
        if all(i is not None or c is None for i, c in zip(items, context)):
            return ("list", tuple(items))
    return None


def flatten(obj: Any, leaves: list, contexts: list) -> Any:
    """obj's structure key (hashable; equal keys have equal encodings but for the tensors' shapes, and rebuild the
    same types: it holds the tensors' dtypes and the scalars' values); its leaves and its registered nodes' contexts
    are appended in pytree order."""
    t = type(obj)
    if t is _Tensor or isinstance(obj, _Tensor):
        leaves.append(obj)
        return obj.dtype
    if obj is None:
        return _NONE
    if t in _SCALARS:
        leaves.append(obj)
        return (t, repr(obj) if t is float else obj)  # a float by its text: -0.0 == 0.0, nan != nan
    if t is tuple or t is list:
        return (t, _flatten_items(obj, leaves, contexts))
    if t is dict:  # the keys' types too: 1 and True are equal keys of a tuple, but rebuild differently
        return (dict, tuple(obj), tuple(map(type, obj)), _flatten_items(obj.values(), leaves, contexts))
    node_type = _pytree._get_node_type(obj)
    node = _pytree.SUPPORTED_NODES.get(node_type)
    if node is None:
        if isinstance(obj, _SCALARS):  # an IntEnum, a str subclass: a leaf, rebuilt as itself
            leaves.append(obj)
            return (t, repr(obj))
        raise Unrecordable(f"cannot record a value of type {t.__qualname__}", "?")
    children, context = node.flatten_fn(obj)
    contexts.append(context)
    ck = _hashable(context)
    if ck is None:  # the field names decide the encoding
        ck = ("names", tuple(_node_names(node, obj, len(children))))
    return (node_type, t, ck, _flatten_items(children, leaves, contexts))


def flatten_call(args: tuple, kwargs: dict, leaves: list, contexts: list) -> Any:
    """flatten((args, kwargs), ...) without the walk's outer levels (the recording path's hot spot)."""
    return (tuple, (
        (tuple, _flatten_items(args, leaves, contexts)),
        (dict, tuple(kwargs), tuple(map(type, kwargs)), _flatten_items(kwargs.values(), leaves, contexts))))


def _flatten_items(items, leaves: list, contexts: list) -> tuple:
    """The keys of a container's items, its plain tensors and Nones handled here (most leaves: no call each)."""
    keys = []
    for x in items:
        if type(x) is _Tensor:
            leaves.append(x)
            keys.append(x.dtype)
        elif x is None:
            keys.append(_NONE)
        else:
            keys.append(flatten(x, leaves, contexts))
    return tuple(keys)


def _key_name(key, i: int) -> str:
    for attr in ("key", "name", "idx"):
        if hasattr(key, attr):
            return str(getattr(key, attr))
    return str(i)


def _node_names(node, obj, n: int) -> list[str]:
    if node.flatten_with_keys_fn is not None:
        keyed, _ = node.flatten_with_keys_fn(obj)
        return [_key_name(k, i) for i, (k, _) in enumerate(keyed)]
    _, context = node.flatten_fn(obj)
    if isinstance(context, (list, tuple)) and len(context) == n and all(isinstance(c, str) for c in context):
        return list(context)
    return [str(i) for i in range(n)]


def key_texts(keys) -> list[str]:
    """A dict's keys as the record format's names: a str as itself, any other key as its repr; when two collide
    (``1`` and ``"1"``), each non-str key as ``type:repr``, then with ``#n`` where that is still taken."""
    names = [k if isinstance(k, str) else repr(k) for k in keys]
    if len(set(names)) < len(names):
        names = [k if isinstance(k, str) else f"{type(k).__name__}:{k!r}" for k in keys]
        if len(set(names)) < len(names):  # still equal (two nan keys, a str key "int:1"): a suffix makes them unique
            taken = {k for k in keys if isinstance(k, str)}
            for i, (k, n) in enumerate(zip(keys, names)):
                if not isinstance(k, str):
                    c, j = n, 1
                    while c in taken:
                        c, j = f"{n}#{j}", j + 1
                    taken.add(c)
                    names[i] = c
    return names


def _text_json(s: str) -> str:
    """A str in the record format: a JSON string, or {"base64": ...} of its bytes when it holds surrogates (what
    decode_text gives for C++ bytes that are not UTF-8), which no strict JSON parser reads as text."""
    try:
        s.encode("utf-8")
        return json.dumps(s)
    except UnicodeEncodeError:
        return '{"base64":"%s"}' % base64.b64encode(s.encode("utf-8", "surrogateescape")).decode("ascii")


# --- leaves: one encoder per kind, chosen once per structure ----------------------------------------------------
def _enc_bool(b) -> str:
    return '{"bool":true}' if b else '{"bool":false}'


def _enc_int(i) -> str:
    i = int(i)
    if _INT64[0] <= i < _INT64[1]:
        return '{"int":%d}' % i
    return '{"str":"%d"}' % i  # beyond 64 bits: the format's int cannot hold it; the snapshot keeps the int


def _enc_float(f) -> str:
    f = float(f)
    if f != f:
        return '{"float":"nan"}'
    if f in (float("inf"), float("-inf")):
        return '{"float":"%s"}' % ("inf" if f > 0 else "-inf")
    return '{"float":%r}' % f


def _enc_str(s) -> str:
    return '{"str":%s}' % _text_json(str(s))


def _enc_bytes(b) -> str:
    return '{"bytes":"%s"}' % base64.b64encode(bytes(b)).decode("ascii")


def _leaf_encoder(leaf):
    if isinstance(leaf, bool):
        return _enc_bool
    if isinstance(leaf, int):
        return _enc_int
    if isinstance(leaf, float):
        return _enc_float
    if isinstance(leaf, str):
        return _enc_str
    return _enc_bytes


class Template:
    """The encoding of one structure: its text cut at each tensor (``pieces``, one more than the tensors), the
    tensors' dtypes and their indexes among the leaves. Scalars are in the text: the structure key holds them."""

    __slots__ = ("pieces", "dtypes", "tensor_index", "lines", "compiled")

    def __init__(self, pieces: list[str], dtypes: list[str], tensor_index: list[int]):
        self.pieces, self.dtypes, self.tensor_index = pieces, dtypes, tensor_index
        self.lines: dict = {}  # the result's structure key -> the record line's Template (inputs then result)
        self.compiled = None  # _engine.CallTemplate of a record line's template

    def fill(self, shapes) -> str:
        out = [self.pieces[0]]
        for shape, dtype, piece in zip(shapes, self.dtypes, self.pieces[1:]):
            out.append('{"shape":%s,"dtype":"%s"}%s' % (list(shape), dtype, piece))
        return "".join(out)


def join_templates(inputs: Template, result: Template | None) -> Template:
    """A record line's template: the call's inputs (``{"args":...,"kwargs":...``), its result if any, the brace."""
    if result is None:
        return Template(inputs.pieces[:-1] + [inputs.pieces[-1] + "}"], inputs.dtypes, inputs.tensor_index)
    pieces = inputs.pieces[:-1] + [inputs.pieces[-1] + ',"result":' + result.pieces[0]] + result.pieces[1:]
    pieces[-1] += "}"
    return Template(pieces, inputs.dtypes + result.dtypes, inputs.tensor_index + result.tensor_index)


def build_template(obj: Any, path: str, structs: dict | None = None, call: bool = False) -> Template:
    """The template of obj's structure (the slow pass, once per structure key). ``structs`` receives
    {struct name: (node type, context, number of fields)} for the registered nodes met. ``call``: obj is (args,
    kwargs), encoded as the start of a record line (``{"args":[...],"kwargs":[...]``, without the closing brace)."""
    pieces: list[str] = []
    cuts: list[str] = []  # finished pieces
    dtypes: list[str] = []
    tensor_index: list[int] = []
    n_leaves = [0]

    def members(pairs, prefix):  # a dict's items, a struct's fields, the keyword arguments: [name, value], ...
        for i, (name, v) in enumerate(pairs):
            if i:
                pieces.append(",")
            pieces.append("[%s," % (_text_json(name)))
            walk(v, f"{prefix}{name}")
            pieces.append("]")

    def walk(o, p):
        t = type(o)
        if o is None:
            pieces.append("null")
        elif isinstance(o, torch.Tensor):
            name = DTYPES.get(o.dtype)
            if name is None:
                raise Unrecordable(f"tensors of dtype {o.dtype} cannot be recorded (the record format has "
                                   f"{', '.join(DTYPES.values())})", p)
            cuts.append("".join(pieces))
            pieces.clear()
            dtypes.append(name)
            tensor_index.append(n_leaves[0])
            n_leaves[0] += 1
        elif (t in _SCALARS) or (
                _pytree._get_node_type(o) not in _pytree.SUPPORTED_NODES and isinstance(o, _SCALARS)):
            pieces.append(_leaf_encoder(o)(o))
            n_leaves[0] += 1
        elif t is tuple or t is list:
            pieces.append('{"%s":[' % ("tuple" if t is tuple else "list"))
            for i, x in enumerate(o):
                if i:
                    pieces.append(",")
                walk(x, f"{p}.{i}")
            pieces.append("]}")
        elif t is dict:
            pieces.append('{"dict":[')
            members(zip(key_texts(o.keys()), o.values()), f"{p}.")
            pieces.append("]}")
        else:
            node_type = _pytree._get_node_type(o)
            node = _pytree.SUPPORTED_NODES.get(node_type)
            if node is None:
                hint = ""
                if t.__module__.startswith("transformers."):
                    hint = (" (transformers' caches: transformers.exporters.exporter_dynamo."
                            "register_cache_pytrees_for_model(model), which torch.export needs too)")
                raise Unrecordable(f"cannot record a value of type {t.__qualname__}: register it as a pytree node "
                                   f"(torch.utils._pytree.register_pytree_node){hint} or pass tensors, scalars and "
                                   f"containers", p)
            children, context = node.flatten_fn(o)
            names = _node_names(node, o, len(children))
            if structs is not None:
                structs[t.__name__] = (node_type, context, len(children))
            pieces.append('{"struct":%s,"fields":[' % (_text_json(t.__name__)))
            members(zip(names, children), f"{p}.")
            pieces.append("]}")

    if call:
        args, kwargs = obj
        pieces.append('{"args":[')
        for i, a in enumerate(args):
            if i:
                pieces.append(",")
            walk(a, f"args.{i}")
        pieces.append('],"kwargs":[')
        members(kwargs.items(), "kwargs.")
        pieces.append("]")
    else:
        walk(obj, path)
    cuts.append("".join(pieces))
    return Template(cuts, dtypes, tensor_index)


def rebuild(key: Any, leaves, contexts) -> Any:
    """The object a structure key describes, from iterators over its leaves and contexts (exact types)."""
    if key is _NONE:
        return None
    if type(key) is torch.dtype:
        return next(leaves)
    kind = key[0]
    if len(key) == 2 and type(kind) is type and kind not in (tuple, list):  # a scalar
        return next(leaves)
    if kind is tuple:
        return tuple([rebuild(k, leaves, contexts) for k in key[1]])
    if kind is list:
        return [rebuild(k, leaves, contexts) for k in key[1]]
    if kind is dict:
        return {k: rebuild(sub, leaves, contexts) for k, sub in zip(key[1], key[3])}
    node_type, t, _, children = key
    context = next(contexts)
    values = [rebuild(k, leaves, contexts) for k in children]
    if t is torch.Size:  # torch's own unflatten gives a tuple, which lacks numel() and the rest
        return torch.Size(values)
    return _pytree.SUPPORTED_NODES[node_type].unflatten_fn(values, context)


def materialize(key: Any, leaves: list, contexts: list) -> Any:
    return rebuild(key, iter(leaves), iter(contexts))


def copy_leaves(leaves: list) -> list:
    """The leaves with their tensors copied (detached clones): a later in-place update must not change them, and
    torch.export guards on a view's base (`x._base.size()`), which a tensor the exported program is later given
    lacks."""
    return [(x.detach().clone() if x.requires_grad else x.clone()) if isinstance(x, torch.Tensor) else x
            for x in leaves]


def to_value(obj: Any) -> tuple[Any, Any]:
    """(the record format's JSON encoding of obj, the object itself: what infer_arguments rebuilds from).
    Raises Unrecordable (a TypeError) for a value the format cannot hold."""
    leaves: list = []
    template = build_template(obj, "value")
    flatten(obj, leaves, [])
    return json.loads(template.fill([leaves[i].shape for i in template.tensor_index])), obj


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
            entry["default"] = None
            if d is not None and isinstance(d, (bool, int, float, str)):
                entry["default"] = json.loads(_leaf_encoder(d)(d))
        out.append(entry)
    return out


def _placeholder(spec: dict) -> torch.Tensor:
    return torch.zeros(spec["shape"], dtype=_TORCH_DTYPES[spec["dtype"]])
