"""Side by side with the reference: onnx-diagnostic's InputObserver (the reference class) observing the same calls.

Same dynamic dimensions and the same arguments wherever its export succeeds. Documented differences:
- `dim_names`: the reference has no automatic naming; hookscope's named Dims are shared only by dimensions equal in
  every call (test_named_dims_only_where_equal), and torch.export accepts both.
- `store_n_calls`: the reference takes it in `__call__` only; hookscope also in the constructor.
- `num_obs`: a method in the reference; hookscope's is an int that can also be called.
- The KV cache (transformers' DynamicCache): over decode steps both give the same and both export; over generate()
  the prefill's empty cache stops the reference (test_generate_with_cache_the_reference_refuses), while hookscope
  fills placeholders, which torch.export accepts (test_kv_cache.py).
"""
import copy

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")
reference = pytest.importorskip("onnx_diagnostic.investigate.input_observer",
                                reason="onnx-diagnostic is installed by tools/python_env.sh")

from helpers import prompts  # noqa: E402
from hookscope.torch import InputObserver  # noqa: E402


@pytest.fixture(scope="module")
def both(tiny_llama):
    ref, ours = reference.InputObserver(), InputObserver()
    for ids in prompts():
        with ref(tiny_llama, store_n_calls=3), ours(tiny_llama, store_n_calls=3):
            tiny_llama.generate(ids, max_new_tokens=3, do_sample=False, use_cache=False)
    # The reference restores forward as an instance attribute (the bound method); hookscope removes its own.
    vars(tiny_llama).pop("forward", None)
    return ref, ours


def test_same_number_of_observations(both):
    ref, ours = both
    assert ref.num_obs() == ours.num_obs == 6


@pytest.mark.parametrize("batch", [None, {"input_ids"}, True])
def test_same_dynamic_shapes(both, batch):
    ref, ours = both
    assert ours.infer_dynamic_shapes(set_batch_dimension_for=batch) == ref.infer_dynamic_shapes(
        set_batch_dimension_for=batch)


@pytest.mark.parametrize("options", [{}, {"as_args_kwargs": True}, {"flat": True}, {"index_or_args_or_kwargs": 4}])
def test_same_arguments(both, options):
    ref, ours = both
    ref_options = dict(options)
    if "index_or_args_or_kwargs" in ref_options:
        ref_options = {"index_or_args_or_kwargs": ref_options.pop("index_or_args_or_kwargs")}
    theirs, mine = ref.infer_arguments(**ref_options), ours.infer_arguments(**options)
    flat_theirs = torch.utils._pytree.tree_leaves(theirs)
    flat_mine = torch.utils._pytree.tree_leaves(mine)
    assert type(theirs) is type(mine)
    assert len(flat_theirs) == len(flat_mine)
    for a, b in zip(flat_theirs, flat_mine):
        if isinstance(a, torch.Tensor):
            torch.testing.assert_close(a, b)
        else:
            assert a == b


def test_both_export(tiny_llama, both):
    ref, ours = both
    for obs in (ref, ours):
        ep = torch.export.export(tiny_llama, (), kwargs=obs.infer_arguments(), dynamic_shapes=obs.infer_dynamic_shapes())
        assert ep is not None


def test_named_dims_only_where_equal(tiny_llama, both):
    """Beyond the reference: dim_names=True gives one Dim per label; input_ids and position_ids share batch and
    length (equal in every call); torch.export accepts it and keeps the equality as one symbol."""
    _, ours = both
    ds = ours.infer_dynamic_shapes(dim_names=True)
    ep = torch.export.export(tiny_llama, (), kwargs=ours.infer_arguments(), dynamic_shapes=ds)
    placeholders = [n for n in ep.graph.nodes if n.op == "placeholder" and n.name in ("input_ids", "position_ids")]
    shapes = {n.name: tuple(str(d) for d in n.meta["val"].shape) for n in placeholders}
    assert shapes["input_ids"] == shapes["position_ids"]


# --- The KV cache (transformers' DynamicCache, registered by transformers' register_cache_pytrees_for_model) ---

def decode_steps(model, ids, steps=3):
    """A prefill outside any observer, then `steps` decode calls with the cache (what each observer sees)."""
    with torch.no_grad():
        out = model(input_ids=ids, use_cache=True)
    cache, b, past = out.past_key_values, ids.shape[0], ids.shape[1]
    calls = []
    for i in range(steps):
        calls.append(dict(input_ids=torch.randint(0, 100, (b, 1)), position_ids=torch.full((b, 1), past + i),
                          cache=cache))
    return calls


def test_generate_with_cache_the_reference_refuses(tiny_llama_cached):
    """generate() with the cache: the prefill's empty DynamicCache flattens to 0 tensors, the decode steps' to 4. The
    reference stops ("has 4 tensors but previously got 0 tensors"); hookscope takes the empty cache as missing and
    fills placeholders (test_kv_cache.py exports from them)."""
    ref, ours = reference.InputObserver(), InputObserver()
    for ids in prompts():
        with ref(tiny_llama_cached, store_n_calls=3), ours(tiny_llama_cached, store_n_calls=3):
            tiny_llama_cached.generate(ids, max_new_tokens=3, do_sample=False)
    vars(tiny_llama_cached).pop("forward", None)
    with pytest.raises(RuntimeError, match="has 4 tensors but previously got 0 tensors"):
        ref.infer_dynamic_shapes()
    assert ours.infer_dynamic_shapes()["cache"] == [{0: torch.export.Dim.DYNAMIC, 2: torch.export.Dim.DYNAMIC}] * 4


@pytest.fixture(scope="module")
def both_cached(tiny_llama_cached):
    """Decode steps only (a filled cache in every call), where the reference succeeds."""
    ref, ours = reference.InputObserver(), InputObserver()
    for ids in prompts():
        calls = decode_steps(tiny_llama_cached, ids)
        with ref(tiny_llama_cached, store_n_calls=3), ours(tiny_llama_cached, store_n_calls=3), torch.no_grad():
            for kw in calls:
                tiny_llama_cached(**kw)
    vars(tiny_llama_cached).pop("forward", None)
    return ref, ours


def test_cache_same_dynamic_shapes_and_arguments(both_cached):
    ref, ours = both_cached
    assert ref.num_obs() == ours.num_obs == 6
    for batch in (None, {"input_ids"}, True):
        assert ours.infer_dynamic_shapes(set_batch_dimension_for=batch) == ref.infer_dynamic_shapes(
            set_batch_dimension_for=batch)
    for options in ({}, {"index_or_args_or_kwargs": 4}):
        theirs, mine = ref.infer_arguments(**options), ours.infer_arguments(**options)
        assert type(theirs) is type(mine) and list(theirs) == list(mine)
        assert type(theirs["cache"]) is type(mine["cache"])
        flat_theirs, flat_mine = torch.utils._pytree.tree_leaves(theirs), torch.utils._pytree.tree_leaves(mine)
        assert len(flat_theirs) == len(flat_mine) == 6
        for a, b in zip(flat_theirs, flat_mine):
            torch.testing.assert_close(a, b)


def test_cache_both_export_and_agree(tiny_llama_cached, both_cached):
    ref, ours = both_cached
    programs = [torch.export.export(tiny_llama_cached, (), kwargs=obs.infer_arguments(),
                                    dynamic_shapes=obs.infer_dynamic_shapes()) for obs in (ref, ours)]
    kwargs = decode_steps(tiny_llama_cached, torch.randint(0, 100, (3, 6)), steps=1)[0]  # batch 3, past 6: unobserved
    with torch.no_grad():
        expected = tiny_llama_cached(**copy.deepcopy(kwargs)).logits
        for ep in programs:
            torch.testing.assert_close(ep.module()(**copy.deepcopy(kwargs)).logits, expected)
