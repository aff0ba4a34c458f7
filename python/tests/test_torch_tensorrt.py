"""Torch-TensorRT's inputs from the engine: DynamicShapes.to_torch_tensorrt() (what `--format torch-tensorrt` prints),
hookscope.torch.to_torch_tensorrt_kwargs / to_torch_tensorrt_inputs and the observer's methods of the same names.

torch_tensorrt itself is not installed by tools/python_env.sh: its 2.14 wheel pins torch < 2.15 and pulls TensorRT's
libraries (tensorrt-cu13-libs, fetched from NVIDIA's own index), and importing it wants CUDA. So its checks are
re-implemented below as read in its source, and only the last test builds real Input objects, where it imports."""
import json
import sys

import pytest

import hookscope
from helpers import DATA

# The files the engine infers from (the others are refused before any profile: test_front_doors.py).
FILES = sorted(p.name for p in DATA.glob("*.jsonl") if not p.name.startswith(("bad_", "cut_", "empty", "rank_", "two_functions")))
TORCH_DTYPES = {"float64", "float32", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool"}


def input_ranges(kwargs: dict) -> list[tuple[tuple, tuple, tuple]]:
    """torch_tensorrt.Input's checks of its keyword arguments, as read in py/torch_tensorrt/_Input.py (pytorch/TensorRT
    main at d7f2062; _init_from_profiles is the same in the torch_tensorrt 2.14.0 wheel): all three of
    min_shape/opt_shape/max_shape, or `profiles` alone (a non-empty list of dicts with the three); per profile one
    length for the three and one rank for every profile; min >= 1 (`profiles` raises; the single range only warns,
    as TensorRT clamps it: we hold both to it); min <= opt <= max element-wise; dtype a name torch has; a non-empty
    name (its default "" means unnamed). Returns the ranges, one per profile."""
    assert isinstance(kwargs["name"], str) and kwargs["name"]
    assert kwargs["dtype"] in TORCH_DTYPES
    keys = ("min_shape", "opt_shape", "max_shape")
    if "profiles" in kwargs:
        assert not any(k in kwargs for k in keys + ("shape",)), "profiles is the only shape specifier"
        assert isinstance(kwargs["profiles"], list) and kwargs["profiles"]
        ranges = [tuple(tuple(p[k]) for k in keys) for p in kwargs["profiles"]]
    else:
        ranges = [tuple(tuple(kwargs[k]) for k in keys)]
    rank = len(ranges[0][0])
    for lo, opt, hi in ranges:
        assert len(lo) == len(opt) == len(hi) == rank
        for d in range(rank):
            assert all(isinstance(v, int) for v in (lo[d], opt[d], hi[d]))
            assert lo[d] >= 1, (kwargs["name"], d, lo)
            assert lo[d] <= opt[d] <= hi[d], (kwargs["name"], d, lo, opt, hi)
    return ranges


@pytest.mark.parametrize("profiles", [1, "auto"])
@pytest.mark.parametrize("name", FILES)
def test_to_torch_tensorrt_passes_inputs_checks_and_keeps_the_profiles(name, profiles):
    ds = hookscope.infer([DATA / name], store_n_calls=None, profiles=profiles)
    specs = json.loads(ds.to_torch_tensorrt())
    assert [s["name"] for s in specs] == [t["name"] for t in ds.inputs]
    raised = 0
    for spec, t in zip(specs, ds.inputs):
        ranges = input_ranges(spec)
        assert len(ranges) == max(1, len(ds.tensorrt_profiles))
        for got, profile in zip(ranges, ds.tensorrt_profiles):
            shapes = {r["input"]: r for r in profile["shapes"]}
            want = shapes.get(t["name"], {"min": [], "opt": [], "max": []})  # rank 0: in no profile
            raised += sum(v < 1 for v in want["min"])
            assert got == tuple(tuple(max(v, 1) for v in want[k]) for k in ("min", "opt", "max"))
    assert len(ds.torch_tensorrt_warnings) == raised


def test_to_torch_tensorrt_kwargs_and_the_observer_methods():
    torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")
    from hookscope.torch import to_torch_tensorrt_kwargs

    ds = hookscope.infer([DATA / "decoder_kv.jsonl"], store_n_calls=None, profiles="auto")
    with pytest.warns(UserWarning, match="Torch-TensorRT wants every min >= 1"):
        kwargs = to_torch_tensorrt_kwargs(ds)
    assert [k["name"] for k in kwargs] == [t["name"] for t in ds.inputs]
    assert kwargs[0]["dtype"] is torch.int64 and kwargs[2]["dtype"] is torch.float32
    # The decoder's prefill and decode phases: two profiles per input, tuples as Input takes them.
    assert kwargs[0]["profiles"] == [{"min_shape": (1, 5), "opt_shape": (1, 7), "max_shape": (2, 7)},
                                     {"min_shape": (1, 1), "opt_shape": (1, 1), "max_shape": (2, 1)}]
    one = to_torch_tensorrt_kwargs(hookscope.infer([DATA / "encoder.jsonl"]))
    assert one[1] == {"name": "mask", "dtype": torch.bool, "min_shape": (1, 5), "opt_shape": (2, 5),
                      "max_shape": (2, 9)}


def test_to_torch_tensorrt_inputs_without_torch_tensorrt(monkeypatch):
    pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")
    from hookscope.torch import to_torch_tensorrt_inputs

    monkeypatch.setitem(sys.modules, "torch_tensorrt", None)  # `import torch_tensorrt` then raises ImportError
    with pytest.raises(ImportError, match="needs the torch_tensorrt package.*to_torch_tensorrt_kwargs"):
        to_torch_tensorrt_inputs(hookscope.infer([DATA / "encoder.jsonl"]))


def test_to_torch_tensorrt_inputs_builds_real_inputs():
    pytest.importorskip("torch_tensorrt", reason="torch_tensorrt is not installed (see the module's docstring)")
    from hookscope.torch import to_torch_tensorrt_inputs

    inputs = to_torch_tensorrt_inputs(hookscope.infer([DATA / "decoder_kv.jsonl"], store_n_calls=None,
                                                      profiles="auto"))
    assert [i.name for i in inputs][:2] == ["input_ids", "attention_mask"]
    assert len(inputs[0].profiles) == 2
