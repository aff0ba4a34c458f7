"""A tiny Llama generating with its KV cache (transformers' DynamicCache), observed over generate() for two prompts of
different batch and length, exported with torch.export and torch.onnx.export(dynamo=True), run in ONNX Runtime.

What torch 2.15 + transformers 5.24 allow, found here: the prefill's cache is empty (past length 0), so exporting from
the observer's arguments needs ``backed_size_oblivious`` (needs_backed_size_oblivious() says so), and the program
traced from a prefill guards ``input_ids.size()[1] != 1`` (torch's matmul decomposition in the attention), so one
program serves the prefill phase (any sequence length but 1, any past length, batch) and a second one, exported from
the decode steps (select()), serves the decode phase. Both are checked against the eager model at every observed
shape and at unobserved shapes inside the ranges."""
import copy

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")
import torch.utils._pytree as pytree  # noqa: E402
from torch.export import Dim  # noqa: E402
from torch.fx.experimental import _config as fx_config  # noqa: E402

from helpers import prompts  # noqa: E402
from hookscope.torch import InputObserver  # noqa: E402

HEADS, HEAD_DIM = 2, 8  # num_key_value_heads, hidden_size / num_attention_heads


@pytest.fixture(scope="module")
def observed(tiny_llama_cached):
    obs = InputObserver()
    for ids in prompts():
        with obs(tiny_llama_cached):
            tiny_llama_cached.generate(ids, max_new_tokens=3, do_sample=False)
    return obs


def call_shapes(obs):
    """(batch, sequence, past) of every stored call."""
    out = []
    for c in obs.engine_info["calls"]:
        kw = dict(c["inputs"]["kwargs"])
        fields = kw["cache"]["fields"]
        out.append((*kw["input_ids"]["shape"], fields[0][1]["shape"][2] if fields else 0))
    return out


def inputs_at(cache_like, b, s, p, g):
    """Inputs of one call: batch b, s new tokens after p cached ones (a cache of the observed structure)."""
    leaves, spec = pytree.tree_flatten(cache_like)
    cache = pytree.tree_unflatten([torch.randn(b, HEADS, p, HEAD_DIM, generator=g) for _ in leaves], spec)
    return {"input_ids": torch.randint(0, 100, (b, s), generator=g),
            "position_ids": torch.arange(p, p + s).expand(b, s), "cache": cache, "logits_to_keep": 1}


def check_same(model, ep, kwargs):
    """Logits and the updated cache of the exported program equal the eager model's (each run on its own copy: the
    model updates the cache it is given)."""
    with torch.no_grad():
        expected = model(**copy.deepcopy(kwargs))
        got = ep.module()(**copy.deepcopy(kwargs))
    torch.testing.assert_close(got.logits, expected.logits)
    exp_cache, got_cache = pytree.tree_leaves(expected.past_key_values), pytree.tree_leaves(got.past_key_values)
    assert len(got_cache) == len(exp_cache) == 4
    for a, b in zip(got_cache, exp_cache):
        torch.testing.assert_close(a, b)


def test_the_cache_is_recorded(observed):
    # 2 prompts x 3 forward calls: a prefill with an empty cache, then two decode steps
    assert observed.num_obs == 6
    assert call_shapes(observed) == [(2, 5, 0), (2, 1, 5), (2, 1, 6), (3, 7, 0), (3, 1, 7), (3, 1, 8)]
    ds = observed.infer_dynamic_shapes()
    assert ds["input_ids"] == {0: Dim.DYNAMIC, 1: Dim.DYNAMIC}
    assert ds["cache"] == [{0: Dim.DYNAMIC, 2: Dim.DYNAMIC}] * 4  # a registered node: the list of its tensors' specs
    kwargs = observed.infer_arguments()
    assert type(kwargs["cache"]).__name__ == "DynamicCache"
    # The reference's candidate (the first call): a prefill; its empty cache has the batch of its input_ids (2), from
    # a decode step of the same generation, not the last call's batch 3 (which the model could not run).
    assert kwargs["input_ids"].shape == (2, 5)
    assert [tuple(t.shape) for t in pytree.tree_leaves(kwargs["cache"])] == [(2, HEADS, 0, HEAD_DIM)] * 4
    assert observed.needs_backed_size_oblivious()  # past length 0
    # The cache's batch, absent at the prefills, equals input_ids' batch in every call giving both: one Dim, and no
    # relation left to state between them.
    named = observed.infer_dynamic_shapes(dim_names=True)
    assert all(spec[0] is named["input_ids"][0] for spec in named["cache"])
    assert not [r["text"] for r in observed.relations(dim_names=True) if "cache_dim_0" in r["text"]]


def test_prefill_program_from_the_observer(tiny_llama_cached, observed):
    """torch.export.export(model, (), kwargs=infer_arguments(), dynamic_shapes=infer_dynamic_shapes()) as a user
    writes it, under backed_size_oblivious: exact at the observed prefill shapes and at unobserved ones inside the
    ranges (batch 2..3, sequence 2..7, past 0..8: a prefill continuing a cache too); the decode shapes are refused
    by the guard the trace added."""
    kwargs = observed.infer_arguments()
    with fx_config.patch(backed_size_oblivious=True):
        ep = torch.export.export(tiny_llama_cached, (), kwargs=kwargs, dynamic_shapes=observed.infer_dynamic_shapes())
    g = torch.Generator().manual_seed(3)
    prefill = [s for s in call_shapes(observed) if s[1] > 1]
    assert prefill == [(2, 5, 0), (3, 7, 0)]
    for b, s, p in prefill + [(2, 7, 0), (3, 5, 0), (2, 2, 0), (2, 3, 4), (3, 6, 8)]:
        check_same(tiny_llama_cached, ep, inputs_at(kwargs["cache"], b, s, p, g))
    with pytest.raises(Exception, match=r"input_ids.size\(\)\[1\] != 1"):
        ep.module()(**inputs_at(kwargs["cache"], 2, 1, 5, g))


@pytest.fixture(scope="module")
def decode(observed):
    return observed.select(lambda args, kwargs: kwargs["input_ids"].shape[1] == 1)


def test_decode_program_from_the_decode_steps(tiny_llama_cached, decode):
    assert decode.num_obs == 4
    ds = decode.infer_dynamic_shapes()
    assert ds["input_ids"] == {0: Dim.DYNAMIC}  # one new token in every decode step
    assert ds["cache"] == [{0: Dim.DYNAMIC, 2: Dim.DYNAMIC}] * 4
    kwargs = decode.infer_arguments()
    assert not decode.needs_backed_size_oblivious()  # batch 2, past 5: a plain export
    ep = torch.export.export(tiny_llama_cached, (), kwargs=kwargs, dynamic_shapes=ds)
    g = torch.Generator().manual_seed(4)
    observed_shapes = call_shapes(decode)
    assert observed_shapes == [(2, 1, 5), (2, 1, 6), (3, 1, 7), (3, 1, 8)]
    for b, s, p in observed_shapes + [(2, 1, 8), (3, 1, 5), (2, 1, 7), (3, 1, 6)]:
        check_same(tiny_llama_cached, ep, inputs_at(kwargs["cache"], b, s, p, g))


def test_onnx_programs_run_in_onnxruntime_at_every_profile_point(tiny_llama_cached, observed, decode, tmp_path):
    """torch.onnx.export(dynamo=True) of both programs with the same dynamic shapes; ONNX Runtime runs every point
    (min, opt, max) of every phase profile of tensorrt_profiles(phases=True), each with its phase's program, and gives
    the eager model's logits."""
    pytest.importorskip("onnxscript", reason="onnxscript is installed by tools/python_env.sh")
    ort = pytest.importorskip("onnxruntime", reason="onnxruntime is installed by tools/python_env.sh")
    sessions = {}
    for phase, obs in (("prefill", observed), ("decode", decode)):
        path = tmp_path / f"{phase}.onnx"
        with fx_config.patch(backed_size_oblivious=phase == "prefill"):
            torch.onnx.export(tiny_llama_cached, (), str(path), kwargs=obs.infer_arguments(),
                              dynamic_shapes=obs.infer_dynamic_shapes(), dynamo=True)
        sessions[phase] = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    profiles = observed.tensorrt_profiles(phases=True)
    assert len(profiles) == 2
    cache_like = observed.infer_arguments()["cache"]
    g = torch.Generator().manual_seed(5)
    for profile in profiles:
        phase = "prefill" if profile["input_ids"][1][1] > 1 else "decode"
        sess = sessions[phase]
        names = [i.name for i in sess.get_inputs()]
        assert sorted(profile) == sorted(names)  # the profile's names are the graph's input names
        for point in range(3):  # min, opt, max
            b, s = profile["input_ids"][point]
            p = profile[names[-1]][point][2]
            assert all(profile[n][point] == (b, HEADS, p, HEAD_DIM) for n in names if n.startswith("cache"))
            kwargs = inputs_at(cache_like, b, s, p, g)
            flat = dict(zip(["input_ids", "position_ids"], [kwargs["input_ids"], kwargs["position_ids"]]))
            flat.update(zip(sorted(n for n in names if n.startswith("cache")), pytree.tree_leaves(kwargs["cache"])))
            got = sess.run(None, {n: flat[n].numpy() for n in names})[0]
            with torch.no_grad():
                expected = tiny_llama_cached(**copy.deepcopy(kwargs)).logits
            torch.testing.assert_close(torch.from_numpy(got), expected, atol=1e-4, rtol=1e-4)
