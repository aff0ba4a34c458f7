"""Torch values in the record format's value encoding (docs/record_format.md), both ways: the encoder (a structure's
text template, built once per structure, that the tensors' shapes fill; ``to_value``; the signature) and the decoder
(an encoding the engine gives back, as objects of the observed types). A new kind of value is added here, on both
sides.

Every value torch's pytree accepts is recorded: tuples, lists and dicts of any keys, namedtuples, OrderedDict,
defaultdict, deque, registered nodes (dataclasses, transformers caches); leaves are tensors, None, bools, ints (an int
beyond 64 bits is recorded as the text of its digits), floats (nan and inf as the format's strings), str (text that
is not UTF-8 as base64) and bytes. Anything else raises Unrecordable, naming the value's path.
"""
from __future__ import annotations

import base64
import inspect
import json
from typing import Any, Mapping, Sequence

import torch
import torch.utils._pytree as _pytree

from .. import Opaque, decode_text

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
SCALARS = (bool, int, float, str, bytes)  # the leaves that are not tensors (None aside)


class Unrecordable(TypeError):
    """A value the record format cannot hold; ``path`` names where it is (``kwargs.past.0``)."""

    def __init__(self, message: str, path: str):
        self.path, self.sentence = path, f"{path}: {message}"
        super().__init__(f"hookscope: {self.sentence}")


def _key_name(key, i: int) -> str:
    for attr in ("key", "name", "idx"):
        if hasattr(key, attr):
            return str(getattr(key, attr))
    return str(i)


def node_names(node, obj, n: int) -> list[str]:
    """The names of a registered node's n fields, as the encoding gives them (its keys, else its context's names, else
    their positions)."""
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


# --- structures: a text template per structure ------------------------------------------------------------------
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


def build_template(obj: Any, path: str, structs: dict | None = None, call: bool = False,
                   tensors: list | None = None) -> Template:
    """The template of obj's structure (the slow pass, once per structure key). ``structs`` receives
    {struct name, and (struct name, number of fields): (node type, context, number of fields)} for the registered
    nodes met, the last of each. ``call``: obj is (args,
    kwargs), encoded as the start of a record line (``{"args":[...],"kwargs":[...]``, without the closing brace).
    ``tensors`` receives obj's tensors, in the order the template's cuts take their shapes."""
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
            if tensors is not None:
                tensors.append(o)
        elif (t in SCALARS) or (
                _pytree._get_node_type(o) not in _pytree.SUPPORTED_NODES and isinstance(o, SCALARS)):
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
            names = node_names(node, o, len(children))
            if structs is not None:
                # By name and by name and field count: a placeholder is rebuilt from a node of its count (a filled
                # cache's, where an empty one of the same class was seen last).
                structs[t.__name__] = structs[(t.__name__, len(children))] = (node_type, context, len(children))
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


def to_value(obj: Any) -> tuple[Any, Any]:
    """(the record format's JSON encoding of obj, the object itself: what infer_arguments rebuilds from).
    Raises Unrecordable (a TypeError) for a value the format cannot hold."""
    tensors: list = []
    template = build_template(obj, "value", tensors=tensors)
    return json.loads(template.fill([t.shape for t in tensors])), obj


def signature_json(sig: inspect.Signature) -> list[dict]:
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


# --- the way back -----------------------------------------------------------------------------------------------
def _placeholder(spec: dict) -> torch.Tensor:
    return torch.zeros(spec["shape"], dtype=_TORCH_DTYPES[spec["dtype"]])


def decode(v: Any, obj: Any, structs: dict) -> Any:
    """The engine's value v as objects: obj (the observed argument, rebuilt with its exact types) where its
    encoding is v, else v's structure with obj's parts wherever they match (placeholders the engine added).
    ``structs``: {struct name, and (struct name, number of fields): (node type, context, number of fields)} of the
    registered nodes seen (``build_template``'s), which rebuild a struct no observed object stands for."""
    if obj is not None or v is None:
        try:
            if to_value(obj)[0] == v:
                return obj
        except Unrecordable:
            pass
    if v is None:
        return None
    if "shape" in v:
        if isinstance(obj, torch.Tensor) and list(obj.shape) == v["shape"] and DTYPES.get(obj.dtype) == v["dtype"]:
            return obj
        return _placeholder(v)
    for tag in ("int", "bool"):
        if tag in v:
            return v[tag]
    if "float" in v:  # JSON has no nan or inf: the format writes them as strings
        return float(v["float"])
    if "str" in v:
        return decode_text(v["str"])
    if "bytes" in v:
        return base64.b64decode(v["bytes"])
    if "opaque" in v:
        return Opaque.from_json(v)
    if "variant" in v:  # Python holds the alternative itself
        return decode(v["value"], obj, structs)
    if "tuple" in v or "list" in v:
        items = v.get("tuple", v.get("list"))
        objs = obj if type(obj) in (tuple, list) else ()
        out = [decode(x, objs[i] if i < len(objs) else None, structs) for i, x in enumerate(items)]
        return tuple(out) if "tuple" in v else out
    if "dict" in v:
        by_name = dict(zip(key_texts(obj.keys()), obj.items())) if type(obj) is dict else {}
        out = {}
        for k, x in v["dict"]:
            name = decode_text(k)
            key, sub = by_name.get(name, (name, None))
            out[key] = decode(x, sub, structs)
        return out
    if "struct" in v:
        fields = v["fields"]
        node_type = _pytree._get_node_type(obj)
        node = _pytree.SUPPORTED_NODES.get(node_type) if obj is not None else None
        children, context = node.flatten_fn(obj) if node is not None else ([], None)
        if node is not None and type(obj).__name__ == v["struct"] and len(children) == len(fields):
            objs = children
        else:
            node_type, context, n = structs.get((v["struct"], len(fields)), structs[v["struct"]])
            if n != len(fields):
                raise RuntimeError(f"hookscope: cannot rebuild a {v['struct']} of {len(fields)} fields (the calls "
                                   f"seen hold {n})")
            objs = [None] * len(fields)
        values = [decode(x, o, structs) for (_, x), o in zip(fields, objs)]
        return _pytree.SUPPORTED_NODES[node_type].unflatten_fn(values, context)
    raise ValueError(f"hookscope: unexpected value {v!r}")


def decode_call(v: Any, args: Sequence, kwargs: Mapping[str, Any], names: Sequence[str],
                structs: dict) -> tuple[tuple, dict]:
    """The engine's arguments in their ``as_args_kwargs`` encoding (``{"tuple":[{"tuple":[...]},{"dict":[...]}]}``)
    as ``(args, kwargs)`` objects (``decode`` of each). ``args``, ``kwargs``: the observed call they come from, whose
    objects are kept where the encoding is theirs; ``names``: the parameters' names, by which a positional argument
    of that call also stands for a keyword argument."""
    by_name = dict(kwargs)
    for i, a in enumerate(args):
        if i < len(names):
            by_name.setdefault(names[i], a)
    args_v, kwargs_v = v["tuple"]
    out_args = tuple(decode(x, args[i] if i < len(args) else None, structs) for i, x in enumerate(args_v["tuple"]))
    out_kwargs = {k: decode(x, by_name.get(k), structs) for k, x in kwargs_v["dict"]}
    return out_args, out_kwargs
