"""Engine results as torch's and Torch-TensorRT's structures: dynamic_shapes with Dim objects, torch_tensorrt.Input
keyword arguments; and which dims such dynamic shapes declare dynamic that torch.export would specialise."""
from __future__ import annotations

import collections
import json
import warnings
from typing import Any

import torch
import torch.utils._pytree as _pytree

from .. import _engine
from .._arguments import flag
from ._codec import key_texts


def _dynamic_shapes_arg(ds: Any) -> _engine.DynamicShapes:
    if not isinstance(ds, _engine.DynamicShapes):
        raise TypeError(f"hookscope: ds: expected a hookscope.DynamicShapes (hookscope.infer's result), got "
                        f"{type(ds).__name__}")
    return ds


def _same_mapping(obj: dict, items: list) -> dict:
    """A dict, OrderedDict or defaultdict (its default_factory kept) of obj's type holding items."""
    if type(obj) is collections.defaultdict:
        return collections.defaultdict(obj.default_factory, items)
    return type(obj)(items)


def _with_input_types(spec, args: tuple, kwargs: dict, names: list[str]):
    """The engine's dynamic_shapes with the inputs' own containers where torch.export compares node types: an
    OrderedDict, a defaultdict, a deque or a namedtuple input gets a spec of its type, a dict keyed by ints (or any
    non-str key) a spec keyed the same."""
    by_name = {**dict(zip(names, args)), **kwargs}

    def fix(sp, obj):
        if sp is None or obj is None or isinstance(obj, torch.Tensor):
            return sp
        t = type(obj)
        if isinstance(sp, dict) and isinstance(obj, dict):
            names_ = key_texts(obj.keys()) if t is dict else [str(k) for k in obj.keys()]
            items = [(k, fix(sp[n], obj[k])) for n, k in zip(names_, obj.keys()) if n in sp]
            return _same_mapping(obj, items) if t in (dict, collections.OrderedDict, collections.defaultdict) else sp
        if isinstance(sp, (list, tuple)):
            if isinstance(obj, dict) and t is not dict and len(sp) == len(obj):  # OrderedDict, defaultdict: a struct
                items = [(k, fix(x, obj[k])) for x, k in zip(sp, obj.keys())]
                return _same_mapping(obj, items) if t in (collections.OrderedDict, collections.defaultdict) else sp
            if t in (tuple, list):
                return type(sp)(fix(x, o) for x, o in zip(sp, obj))
            node_type = _pytree._get_node_type(obj)
            if node_type is collections.deque:
                return collections.deque([fix(x, o) for x, o in zip(sp, obj)], maxlen=obj.maxlen)
            if node_type is _pytree.namedtuple:
                return t(*[fix(x, o) for x, o in zip(sp, obj)])
            node = _pytree.SUPPORTED_NODES.get(node_type)
            if node is not None:  # a dataclass, a cache: the engine's list, each child fixed
                children = node.flatten_fn(obj)[0]
                if len(children) == len(sp):
                    return type(sp)(fix(x, c) for x, c in zip(sp, children))
        return sp

    if isinstance(spec, dict):
        return {k: fix(v, by_name.get(k)) for k, v in spec.items()}
    if isinstance(spec, (tuple, list)):
        return type(spec)(fix(x, args[i] if i < len(args) else None) for i, x in enumerate(spec))
    return spec


def to_torch_dynamic_shapes(ds: _engine.DynamicShapes, as_strings: bool = False):
    """A DynamicShapes as torch.export's structure: dict/tuple/list as the engine's tree, {dim: Dim} per tensor
    (``as_strings``: a named dim as its label, as yobx's dim_names gives it; an unnamed one stays Dim.DYNAMIC)."""
    from torch.export import Dim

    _dynamic_shapes_arg(ds)
    as_strings = flag("as_strings", as_strings)
    dims: dict[str, Any] = {}
    inputs = ds.inputs

    def tensor_spec(i: int) -> dict:
        out = {}
        for d in inputs[i]["dynamic_dims"]:
            label = d["label"]
            if label == "DYNAMIC":
                out[d["dim"]] = Dim.DYNAMIC
            else:
                out[d["dim"]] = label if as_strings else dims.setdefault(label, Dim(label))
        return out

    def convert(node, top=False):
        kind = node["kind"]
        if kind == "null":
            return None
        if kind == "tensor":
            return tensor_spec(node["tensor"])
        children = node["children"]
        if kind == "dict":
            return {k: convert(c) for k, c in children}
        items = [convert(c) for _, c in children]
        return tuple(items) if kind == "tuple" or top else items

    return convert(ds.root, top=True)


def to_torch_tensorrt_kwargs(ds: _engine.DynamicShapes) -> list[dict]:
    """Per tensor input (``ds.inputs`` order) the keyword arguments of ``torch_tensorrt.Input``, from
    ``ds.to_torch_tensorrt()``: ``name``, ``dtype`` (a torch.dtype) and ``min_shape``/``opt_shape``/``max_shape``
    tuples, or ``profiles`` (a list of such dicts, Torch-TensorRT 2.14) for several profiles. A dimension whose min
    is 0 is raised to 1 (Torch-TensorRT wants min >= 1), with a warning saying which calls the engine cannot take."""
    for w in _dynamic_shapes_arg(ds).torch_tensorrt_warnings:
        warnings.warn(w, stacklevel=3)

    def shapes(r: dict) -> dict:
        return {k: tuple(r[k]) for k in ("min_shape", "opt_shape", "max_shape")}

    out = []
    for spec in json.loads(ds.to_torch_tensorrt()):
        kwargs = {"name": spec["name"], "dtype": getattr(torch, spec["dtype"])}
        if "profiles" in spec:
            kwargs["profiles"] = [shapes(p) for p in spec["profiles"]]
        else:
            kwargs.update(shapes(spec))
        out.append(kwargs)
    return out


def to_torch_tensorrt_inputs(ds: _engine.DynamicShapes) -> list:
    """``torch_tensorrt.Input(**kwargs)`` for each of ``to_torch_tensorrt_kwargs(ds)``; ImportError naming the
    package when torch_tensorrt cannot be imported (it needs TensorRT's libraries and, to import, often CUDA)."""
    _dynamic_shapes_arg(ds)
    try:
        import torch_tensorrt
    except ImportError as e:
        raise ImportError("hookscope: torch_tensorrt_inputs needs the torch_tensorrt package (pip install "
                          "torch-tensorrt; it brings TensorRT), which cannot be imported here: " + str(e) +
                          "; to_torch_tensorrt_kwargs gives the same keyword arguments without it") from e
    return [torch_tensorrt.Input(**kwargs) for kwargs in to_torch_tensorrt_kwargs(ds)]


def specialised_dims(arguments: Any, dynamic_shapes: Any, names: list[str], var_keyword: str | None) -> list[int]:
    """The dims ``dynamic_shapes`` (as infer_dynamic_shapes gives them) declares dynamic that are 0 or 1 in
    ``arguments`` (a dict, a tuple or (args, kwargs), as infer_arguments gives them): torch.export specialises them
    unless the export runs under backed_size_oblivious. ``names``: the signature's parameters; ``var_keyword``: the
    name of its ``**kwargs`` or None. Raises where the two structures do not match."""
    found = []
    if (isinstance(arguments, dict) and isinstance(dynamic_shapes, dict) and var_keyword in dynamic_shapes
            and var_keyword not in arguments):
        # torch.export's structure: the keywords **kwargs takes, grouped under its parameter's name
        named = [n for n in names if n != var_keyword]
        arguments = {**{k: v for k, v in arguments.items() if k in named},
                     var_keyword: {k: v for k, v in arguments.items() if k not in named}}

    def walk(v, spec):
        if spec is None or v is None:
            return
        if not isinstance(spec, (dict, list, tuple)):
            raise TypeError(f"hookscope: dynamic_shapes: expected dicts, tuples, lists or None as "
                            f"infer_dynamic_shapes gives them, found {type(spec).__name__} {spec!r}")
        node = None if type(v) in (dict, tuple, list) else _pytree.SUPPORTED_NODES.get(_pytree._get_node_type(v))
        if isinstance(v, torch.Tensor):
            dims = list(spec) if isinstance(spec, dict) else [i for i, x in enumerate(spec) if x is not None]
            found.extend(d for d in dims if isinstance(d, int) and -v.dim() <= d < v.dim() and v.shape[d] in (0, 1))
        elif node is not None and isinstance(spec, (list, tuple)):
            # A registered node, a mapping one too (transformers' ModelOutput is an OrderedDict): its spec is one
            # entry per child of its flattening, as torch.export compares it.
            for x, sub in zip(node.flatten_fn(v)[0], spec):
                walk(x, sub)
        elif (isinstance(spec, dict) and isinstance(v, (tuple, list))) or (isinstance(v, dict) and
                                                                            not isinstance(spec, dict)):
            raise ValueError(f"hookscope: arguments and dynamic_shapes do not match: dynamic_shapes gives a "
                             f"{type(spec).__name__} where the arguments hold a {type(v).__name__}")
        elif isinstance(spec, dict):
            for k, sub in spec.items():
                if isinstance(v, dict) and k not in v:
                    raise ValueError(f"hookscope: arguments and dynamic_shapes do not match: dynamic_shapes "
                                     f"names {k!r}, which the arguments lack")
                walk(v[k] if isinstance(v, dict) else getattr(v, k, None), sub)
        elif type(v) in (tuple, list):
            for x, sub in zip(v, spec):
                walk(x, sub)
        elif type(v) in _pytree.SUPPORTED_NODES:
            for x, sub in zip(_pytree.SUPPORTED_NODES[type(v)].flatten_fn(v)[0], spec):
                walk(x, sub)

    if (isinstance(arguments, tuple) and len(arguments) == 2 and isinstance(arguments[0], tuple)
            and isinstance(arguments[1], dict) and isinstance(dynamic_shapes, dict)):
        # (args, kwargs) as infer_arguments(as_args_kwargs=True) gives them, shapes by name: the positional
        # arguments by their parameters' names.
        args, kwargs = arguments
        arguments = {**dict(zip(names, args)), **kwargs}
    walk(arguments, dynamic_shapes)
    return found
