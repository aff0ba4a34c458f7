"""Side by side with the reference: onnx-diagnostic's InputObserver (the seed's class) observing the same calls.

Same dynamic dimensions and the same arguments wherever its export succeeds. Documented differences:
- `dim_names`: the reference has no automatic naming; hookscope's named Dims are shared only by dimensions equal in
  every call (test_named_dims_only_where_equal), and torch.export accepts both.
- `store_n_calls`: the reference takes it in `__call__` only; hookscope also in the constructor.
- `num_obs`: a method in the reference; hookscope's is an int that can also be called.
"""
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
