"""hookscope.torch.InputObserver against the real consumers: torch.export.export, torch.onnx.export(dynamo=True)
and ONNX Runtime, on a tiny random Llama observed over generate() for two prompts of different batch and length."""
import pytest

torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")
from torch.export import Dim  # noqa: E402

from helpers import observe_generate  # noqa: E402
from hookscope.torch import InputObserver  # noqa: E402


@pytest.fixture(scope="module")
def observed(tiny_llama):
    return observe_generate(InputObserver(), tiny_llama)


def logits(out):
    return out.logits if hasattr(out, "logits") else out[0]


def test_forward_is_restored_even_on_exceptions(tiny_llama):
    obs = InputObserver()
    assert "forward" not in vars(tiny_llama)
    with pytest.raises(ZeroDivisionError):
        with obs(tiny_llama):
            assert "forward" in vars(tiny_llama)
            tiny_llama(torch.zeros((1, 3), dtype=torch.int64))
            1 / 0
    assert "forward" not in vars(tiny_llama)
    assert obs.num_obs == 1 and obs.num_obs() == 1


def test_store_n_calls_per_block(observed):
    # 2 prompts x (3 new tokens = 3 forward calls), 3 kept per block
    assert observed.num_obs == 6
    info = observed.engine_info
    assert len(info["calls"]) == 6
    shapes = [c["inputs"]["kwargs"][0][1]["shape"] for c in info["calls"]]
    assert shapes == [[2, 5], [2, 6], [2, 7], [3, 7], [3, 8], [3, 9]]


def test_dynamic_shapes_shape_and_types(observed):
    ds = observed.infer_dynamic_shapes()
    assert isinstance(ds, dict)
    assert ds["input_ids"] == {0: Dim.DYNAMIC, 1: Dim.DYNAMIC}
    named = observed.infer_dynamic_shapes(dim_names=True)
    # input_ids and position_ids are equal in every call: one Dim object each for batch and length, shared.
    assert named["input_ids"][0] is named["position_ids"][0]
    assert named["input_ids"][1] is named["position_ids"][1]
    assert named["input_ids"][0].__name__ == "batch_size"
    assert named["input_ids"][1].__name__ == "sequence_length"


def test_infer_arguments_are_observed_tensors(observed):
    kwargs = observed.infer_arguments()
    assert isinstance(kwargs, dict)
    assert kwargs["input_ids"].shape == (2, 5)
    args, kw = observed.infer_arguments(as_args_kwargs=True)
    assert args == () and kw.keys() == kwargs.keys()
    flat = observed.infer_arguments(flat=True)
    assert all(isinstance(t, torch.Tensor) for t in flat)
    assert observed.infer_arguments(4)["input_ids"].shape == (3, 8)


def check_exported(model, ep, kwargs):
    """The exported program's logits equal the eager model's."""
    with torch.no_grad():
        expected = logits(model(**kwargs))
        got = logits(ep.module()(**kwargs))
    torch.testing.assert_close(got, expected)


@pytest.mark.parametrize("dim_names", [False, True])
def test_torch_export_exact_at_observed_and_unobserved_shapes(tiny_llama, observed, dim_names):
    kwargs = observed.infer_arguments()
    ds = observed.infer_dynamic_shapes(dim_names=dim_names)
    ep = torch.export.export(tiny_llama, (), kwargs=kwargs, dynamic_shapes=ds)
    constants = {k: v for k, v in kwargs.items() if not isinstance(v, torch.Tensor)}
    g = torch.Generator().manual_seed(2)
    # every observed shape, then unobserved ones inside the observed ranges (batch 2..3, length 5..9)
    shapes = [tuple(c["inputs"]["kwargs"][0][1]["shape"]) for c in observed.engine_info["calls"]] + [(2, 8), (3, 6), (2, 9)]
    for b, s in shapes:
        ids = torch.randint(0, 100, (b, s), generator=g)
        pos = torch.arange(s).expand(b, s)
        check_exported(tiny_llama, ep, {"input_ids": ids, "position_ids": pos, **constants})


def test_report_and_profiles(observed):
    report = observed.report()
    assert "input_ids" in report and "DYNAMIC" in report
    (profile,) = observed.tensorrt_profiles()
    # min, most frequent (the smallest on a tie: batch 2 and 3 three times each; length 7 twice), max
    assert profile["input_ids"] == ((2, 5), (2, 7), (3, 9))


def test_relations(observed):
    # input_ids and position_ids are equal in every call, dim by dim: the shared names say it (one Dim object, see
    # test_dynamic_shapes_shape_and_types), so relations() lists no equality; nothing else relates them.
    assert observed.relations(dim_names=True) == []


def test_relations_from_records():
    import hookscope
    from helpers import DATA
    (r,) = hookscope.infer([DATA / "decoder_kv.jsonl"], dim_names=True).relations
    assert r["text"] == "total_sequence_length = sequence_length + past_sequence_length"
    assert not r["torch_derived"]
    # The first 3 calls (store_n_calls' default): (sequence, past) = (7, 0), (1, 7), (1, 8), each once.
    assert (r["supporting_calls"], r["distinct_points"]) == (3, 3)


def test_onnx_dynamo_export_runs_in_onnxruntime_at_profile_points(tiny_llama, observed, tmp_path):
    pytest.importorskip("onnxscript", reason="onnxscript is installed by tools/python_env.sh")
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime is installed by tools/python_env.sh")
    kwargs = observed.infer_arguments()
    tensors = {k: v for k, v in kwargs.items() if isinstance(v, torch.Tensor)}
    path = tmp_path / "llama.onnx"
    torch.onnx.export(tiny_llama, (), str(path), kwargs=kwargs, dynamic_shapes=observed.infer_dynamic_shapes(),
                      dynamo=True)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    profiles = observed.tensorrt_profiles() + observed.tensorrt_profiles(phases=True)
    for profile in profiles:
        assert sorted(profile) == sorted(names)  # the profile's names are the graph's input names
        for point in range(3):  # min, opt, max
            feeds = {}
            for name in names:
                shape = profile[name][point]
                t = tensors[name]
                feeds[name] = (torch.arange(shape[-1]).expand(*shape) if name == "position_ids"
                               else torch.randint(0, 100, shape)).to(t.dtype).numpy()
            got = sess.run(None, feeds)[0]
            with torch.no_grad():
                expected = logits(tiny_llama(**{k: torch.from_numpy(v) for k, v in feeds.items()},
                                             **{k: v for k, v in kwargs.items() if k not in tensors}))
            torch.testing.assert_close(torch.from_numpy(got), expected, atol=1e-4, rtol=1e-4)


def test_write_records_then_infer_from_records(observed, tmp_path):
    import hookscope
    path = tmp_path / "forward.jsonl"
    assert observed.write_records(path) == 6
    from_records = hookscope.infer([path], store_n_calls=None, dim_names=True)
    assert from_records.to_json() == observed._dynamic_shapes(None, True).to_json()
