"""``InputObserver.check_discrepancies``: ONNX Runtime runs every stored call's inputs through an exported model and
its outputs are compared with the ones the observed method returned (the references' check_discrepancies: the
keys of onnx-diagnostic's, the ``ONNXProgram`` and ``initializer`` of torch.onnx's)."""
from __future__ import annotations

import os
import time
from collections.abc import Mapping
from typing import Any, Callable

import torch

from .._arguments import callable_, flag, items, tolerance
from . import _sentences
from ._info import _shape_text


ACCEPTED = ("an ONNX file name (str or os.PathLike), an onnx.ModelProto, an ONNX IR model (onnx_ir, onnxscript.ir: "
            "converted by onnx_ir.to_proto), or an object holding one as .model_proto, .get_proto(), .proto or .model "
            "(torch.onnx.ONNXProgram, yobx's to_onnx result, ...)")

# Where the exporters' results hold their model, in the order tried: torch.onnx.ONNXProgram has model_proto (and its
# IR model as model); yobx's ExportArtifact get_proto() (weights included) and proto.
_HOLDERS = ("model_proto", "get_proto", "proto", "model")


def _is_model_proto(obj: Any) -> bool:
    """An onnx.ModelProto by what it offers (a GraphProto or FunctionProto has no opset_import beside a graph)."""
    return callable(getattr(obj, "SerializeToString", None)) and hasattr(obj, "graph") and hasattr(obj, "opset_import")


def _is_ir_model(obj: Any) -> bool:
    """An onnx_ir (onnxscript.ir) Model: a graph and an ir_version, no protobuf serialisation."""
    return (not callable(getattr(obj, "SerializeToString", None)) and hasattr(obj, "graph")
            and hasattr(obj, "ir_version") and hasattr(obj, "opset_imports"))


def _ir_to_proto(model: Any) -> Any:
    try:
        import onnx_ir
    except ImportError:
        import onnxscript.ir as onnx_ir  # older onnxscript ships the IR as its own module
    return onnx_ir.to_proto(model)


def _model_bytes_or_path(onnx_model: Any, depth: int = 0) -> str | bytes:
    """The model as ONNX Runtime's InferenceSession takes it: a file name or the serialized model, found by what the
    object offers, not by its class."""
    if isinstance(onnx_model, (str, os.PathLike)):
        name = os.fspath(onnx_model)
        if not os.path.isfile(name):
            raise FileNotFoundError(f"hookscope: check_discrepancies: onnx_model: no file {name!r}")
        return name
    if _is_model_proto(onnx_model):
        return onnx_model.SerializeToString()
    if _is_ir_model(onnx_model):
        return _ir_to_proto(onnx_model).SerializeToString()
    if depth < 2:  # a result holding a result holding the model at most: no cycle followed for ever
        for attribute in _HOLDERS:
            held = getattr(onnx_model, attribute, None)
            if callable(held) and attribute == "get_proto":
                held = held()
            # Only objects are followed: a text held there names no model given by this object.
            followed = held is not None and held is not onnx_model and not isinstance(held, (str, bytes))
            if followed and not callable(held):
                try:
                    return _model_bytes_or_path(held, depth + 1)
                except TypeError:  # that attribute holds something else: the next may hold the model
                    continue
    raise TypeError(f"hookscope: check_discrepancies: onnx_model: expected {ACCEPTED}, got "
                    f"{type(onnx_model).__name__}")


def _default_session(model: str | bytes):
    import onnxruntime

    return onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])


def _hist_thresholds(hist: Any) -> list[tuple[str, float]]:
    """(row key, threshold) per threshold: the key spells the value as given (``>1`` for 1, as onnx-diagnostic's)."""
    if hist is None or hist is False:
        return []
    if isinstance(hist, (str, bytes, Mapping)) or not hasattr(hist, "__iter__"):
        raise TypeError(f"hookscope: check_discrepancies: hist: expected a sequence of thresholds, got "
                        f"{type(hist).__name__} {hist!r}")
    keyed = {f">{h}": tolerance("check_discrepancies: hist", h)
             for h in items("check_discrepancies: hist", hist, "a sequence of thresholds")}
    return list(keyed.items())  # a threshold given twice is one key, counted once


def _compare(expected: list, got: list, hist: list[tuple[str, float]], skip_none: bool) -> dict[str, Any]:
    """abs, rel, sum, n, dnan and one count per threshold (``>0.1``: elements whose absolute error is above it), or
    an ``error`` saying how the outputs differ in count, shape or dtype."""
    # An empty last output ONNX Runtime gives and torch left out (the references drop it too).
    got = list(got)
    if skip_none and len(got) != len(expected):
        # torch.onnx.export leaves a None output out of the graph: skipped, as skip_none says.
        expected = [e for e in expected if e is not None]
    while len(got) > len(expected) and got and got[-1].size == 0:
        got.pop()
    if len(got) != len(expected):
        return {"abs": float("inf"), "rel": float("inf"),
                "error": f"not the same number of outputs: torch gave {len(expected)}, ONNX Runtime {len(got)}"}
    out: dict[str, Any] = {"abs": 0.0, "rel": 0.0, "sum": 0.0, "n": 0.0, "dnan": 0.0}
    out.update({k: 0 for k, _ in hist})
    for i, (e, g) in enumerate(zip(expected, got)):
        if e is None or g is None:
            if (e is None) != (g is None) and not skip_none:
                return {**out, "abs": float("inf"), "rel": float("inf"), "error": f"output {i}: missing output"}
            continue
        if not isinstance(e, torch.Tensor):
            e = torch.tensor(e)
        g = torch.from_numpy(g) if not isinstance(g, torch.Tensor) else g
        if tuple(e.shape) != tuple(g.shape):
            return {**out, "abs": float("inf"), "rel": float("inf"),
                    "error": f"output {i}: not the same shape: torch {tuple(e.shape)}, ONNX Runtime {tuple(g.shape)}"}
        if e.dtype != g.dtype:
            return {**out, "abs": float("inf"), "rel": float("inf"),
                    "error": f"output {i}: not the same type: torch {e.dtype}, ONNX Runtime {g.dtype}"}
        if e.numel() == 0:
            continue
        e64, g64 = e.detach().cpu().to(torch.float64), g.to(torch.float64)
        diff = (g64 - e64).abs()
        nan_diff = (e64.isnan().to(torch.int64) - g64.isnan().to(torch.int64)).abs().sum().item()
        diff = torch.where(e64.isnan() & g64.isnan(), torch.zeros_like(diff), diff)
        diff = torch.where(diff.isnan(), torch.full_like(diff, float("inf")), diff)
        out["abs"] = max(out["abs"], diff.max().item())
        out["rel"] = max(out["rel"], (diff / (e64.abs() + 1e-3)).max().item())
        out["sum"] += diff.sum().item()
        out["n"] += float(diff.numel())
        out["dnan"] += float(nan_diff)
        for k, h in hist:
            out[k] += int((diff > h).sum().item())
    return out


def _feed(t: torch.Tensor):
    t = t.detach().cpu()
    if t.dtype == torch.bfloat16:
        raise TypeError("hookscope: check_discrepancies: a bfloat16 input cannot be fed to ONNX Runtime from numpy")
    return t.numpy()


def check_discrepancies(observer: Any, onnx_model: Any, atol: float = 1e-4, rtol: float = 0.1,
                        hist=(0.1, 0.01), progress_bar: bool = False, include_io: bool = True,
                        skip_none: bool = True, initializer: Callable[[str | bytes], Any] | None = None
                        ) -> list[dict[str, Any]]:
    """observer.check_discrepancies(...) of this InputObserver (handed in: this module never imports it)."""
    atol, rtol = tolerance("check_discrepancies: atol", atol), tolerance("check_discrepancies: rtol", rtol)
    thresholds = _hist_thresholds(hist)
    progress_bar = flag("check_discrepancies: progress_bar", progress_bar)
    include_io = flag("check_discrepancies: include_io", include_io)
    skip_none = flag("check_discrepancies: skip_none", skip_none)
    callable_("check_discrepancies: initializer", initializer, optional=True)
    model = _model_bytes_or_path(onnx_model)
    observer._check()
    session = (initializer or _default_session)(model)
    input_names = [i.name for i in session.get_inputs()]
    info = observer.info
    indices = list(range(len(info)))
    if progress_bar:
        try:
            from tqdm import tqdm
        except ImportError:  # the bar is a convenience: without tqdm the check runs without it
            pass
        else:
            indices = tqdm(indices)
    data: list[dict[str, Any]] = []
    for i in indices:
        candidate, outputs, latency = info.inputs[i], info.flat_outputs[i], info.latencies[i]
        if outputs is None:  # the observed call raised: nothing to compare with
            continue
        aligned = candidate.aligned_flat_list
        if len(aligned) != len(input_names):
            raise _sentences.tensor_count_differs(i, len(aligned), input_names)
        tensors = observer.infer_arguments(i, flat=True)
        feeds = dict(zip(input_names, tensors))
        begin = time.perf_counter()
        try:
            got = session.run(None, {k: _feed(v) for k, v in feeds.items()})
            error = None
        except Exception as e:  # the references report ONNX Runtime's refusal in the row instead of raising
            got, error = None, str(e)
        duration = time.perf_counter() - begin
        if error is not None:
            row: dict[str, Any] = {"error": error, "SUCCESS": False}
        else:
            row = _compare(outputs, got, thresholds, skip_none)
            row["SUCCESS"] = ("error" not in row and row["abs"] < atol and row["rel"] < rtol)
        row.update(index=len(data), duration_torch=latency, ort_duration=duration, n_inputs=len(input_names),
                   n_none=sum(t is None for t in aligned),
                   n_empty=sum(t is None or t.numel() == 0 for t in aligned), atol=atol, rtol=rtol)
        if include_io:
            row["inputs"] = _shape_text(feeds)
            row["outputs_torch"] = _shape_text(outputs)
            row["outputs_ort"] = _shape_text(None if got is None else [torch.from_numpy(g) for g in got])
        data.append(row)
    return data
