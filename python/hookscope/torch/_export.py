"""Engine results as torch's and Torch-TensorRT's structures: dynamic_shapes with Dim objects, torch_tensorrt.Input
keyword arguments."""
from __future__ import annotations

import json
import warnings
from typing import Any

import torch

from .. import _engine
from .._arguments import flag


def _dynamic_shapes_arg(ds: Any) -> _engine.DynamicShapes:
    if not isinstance(ds, _engine.DynamicShapes):
        raise TypeError(f"hookscope: ds: expected a hookscope.DynamicShapes (hookscope.infer's result), got "
                        f"{type(ds).__name__}")
    return ds


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
