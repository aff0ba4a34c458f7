"""value_if_missing keyed by position or by name gives torch.onnx's answers: the same dynamic shapes (with and without
set_batch_dimension_for), the same container (a name key makes torch.onnx key positional calls' inputs by name: a
dict, not a tuple) and arguments of the same shapes, each scenario run on torch.onnx.InputObserver (torch 2.15) and on
hookscope's in the same test."""
import pytest

torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")

import torch.onnx  # noqa: E402

from hookscope.torch import InputObserver  # noqa: E402


class VisionDecoder(torch.nn.Module):
    def forward(self, input_ids=None, pixel_values=None, attention_mask=None, past_key_values=None):
        return input_ids


class TwoInputs(torch.nn.Module):
    def forward(self, x, y=None):
        return x


def ids(*shape):
    return torch.ones(shape, dtype=torch.int64)


def image_then_cache():
    """An image at the first call only (None afterwards), a cache from the second on: positional calls."""
    return [((ids(1, 28), ids(1, 3, 112, 112), ids(1, 28)), {}),
            ((ids(1, 1), None, ids(1, 29), torch.rand(1, 1, 28, 32)), {}),
            ((ids(1, 1), None, ids(1, 30), torch.rand(1, 1, 29, 32)), {})]


def image_then_cache_batch_two():
    return [((ids(2, 28), ids(2, 3, 112, 112), ids(2, 28)), {}),
            ((ids(3, 1), None, ids(3, 29), torch.rand(3, 1, 28, 32)), {}),
            ((ids(2, 1), None, ids(2, 30), torch.rand(2, 1, 29, 32)), {})]


def given_every_time():
    """The keyed input given in every call: the references replace it by the placeholder all the same."""
    return [((torch.randn(2, 3), torch.randn(2, 3)), {}), ((torch.randn(3, 4), torch.randn(3, 5)), {})]


def image_by_keyword():
    return [((), {"input_ids": ids(2, 28), "pixel_values": ids(2, 3, 112, 112), "attention_mask": ids(2, 28)}),
            ((), {"input_ids": ids(3, 1), "attention_mask": ids(3, 29), "past_key_values": torch.rand(3, 1, 28, 32)}),
            ((), {"input_ids": ids(2, 1), "attention_mask": ids(2, 30), "past_key_values": torch.rand(2, 1, 29, 32)})]


IMAGE = torch.empty((0, 3, 112, 112), dtype=torch.int64)
SCENARIOS = {
    # name: (model, calls, {key style: value_if_missing})
    "image then cache, batch 1": (VisionDecoder, image_then_cache, {"position": {1: IMAGE},
                                                                   "name": {"pixel_values": IMAGE}}),
    "image then cache, batches 2 and 3": (VisionDecoder, image_then_cache_batch_two,
                                          {"position": {1: IMAGE}, "name": {"pixel_values": IMAGE}}),
    "given every time": (TwoInputs, given_every_time, {"position": {1: torch.empty((0, 4))},
                                                       "name": {"y": torch.empty((0, 4))}}),
    "image by keyword": (VisionDecoder, image_by_keyword, {"name": {"pixel_values": IMAGE}}),
}
CASES = [(name, key, batch) for name, (_, _, keys) in SCENARIOS.items() for key in keys for batch in (None, True)]


def observed(cls, name, key):
    model_type, calls, keys = SCENARIOS[name]
    model, obs = model_type(), cls(value_if_missing=keys[key])
    with obs(model):
        for args, kwargs in calls():
            model(*args, **kwargs)
    return obs


def shapes(arguments):
    items = arguments.items() if isinstance(arguments, dict) else enumerate(arguments)
    return {k: None if v is None else tuple(v.shape) for k, v in items}


@pytest.mark.parametrize("name, key, batch", CASES, ids=[f"{n}-{k}-batch={b}" for n, k, b in CASES])
def test_dynamic_shapes_are_torch_onnx_s(name, key, batch):
    ours = observed(InputObserver, name, key).infer_dynamic_shapes(set_batch_dimension_for=batch)
    theirs = observed(torch.onnx.InputObserver, name, key).infer_dynamic_shapes(set_batch_dimension_for=batch)
    assert type(ours) is type(theirs), (ours, theirs)
    assert ours == theirs


@pytest.mark.parametrize("name, key", sorted({(n, k) for n, k, _ in CASES}))
def test_arguments_are_torch_onnx_s(name, key):
    ours = observed(InputObserver, name, key).infer_arguments()
    theirs = observed(torch.onnx.InputObserver, name, key).infer_arguments()
    assert type(ours) is type(theirs), (ours, theirs)
    assert shapes(ours) == shapes(theirs)


def test_the_image_a_call_gave_keeps_its_batch_dimension_keyed_by_position():
    """The regression: keyed by position, the placeholder that replaces the first call's image must not make the
    image unobserved: set_batch_dimension_for=True gives it {0: DYNAMIC}, as keyed by name."""
    by_position = observed(InputObserver, "image then cache, batch 1", "position")
    by_name = observed(InputObserver, "image then cache, batch 1", "name")
    dynamic = torch.export.Dim.DYNAMIC
    assert by_position.infer_dynamic_shapes(set_batch_dimension_for=True)[1] == {0: dynamic}
    assert by_name.infer_dynamic_shapes(set_batch_dimension_for=True)["pixel_values"] == {0: dynamic}
    assert by_position.infer_arguments()[1].shape == (0, 3, 112, 112)
    assert by_name.infer_arguments()["pixel_values"].shape == (0, 3, 112, 112)


def test_keyed_by_name_the_arguments_and_shapes_export_together():
    """A dict of arguments and a dict of dynamic shapes (the name key's containers) are what torch.export takes."""
    obs = observed(InputObserver, "given every time", "name")
    kwargs, ds = obs.infer_arguments(), obs.infer_dynamic_shapes()
    assert isinstance(kwargs, dict) and isinstance(ds, dict) and list(kwargs) == list(ds) == ["x", "y"]
    ep = torch.export.export(TwoInputs(), (), kwargs=kwargs, dynamic_shapes=ds)
    assert ep.module()(x=torch.randn(4, 6), y=kwargs["y"]).shape == (4, 6)
