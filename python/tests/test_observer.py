"""hookscope.torch.InputObserver on small modules: optional inputs (value_if_missing), remove_inputs, registered
pytree nodes rebuilt with their own type, positional arguments, and torch.export on each."""
import dataclasses

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")
import torch.utils._pytree as pytree  # noqa: E402
from torch.export import Dim  # noqa: E402

from hookscope.torch import InputObserver  # noqa: E402


class Vision(torch.nn.Module):
    def forward(self, input_ids, pixel_values=None):
        x = input_ids.float().sum(dim=1, keepdim=True)
        if pixel_values is not None:
            x = x + pixel_values.sum()
        return x


def test_value_if_missing_gives_the_placeholder():
    m = Vision()
    obs = InputObserver(value_if_missing={"pixel_values": torch.empty((0, 3, 8, 8))})
    with obs(m):
        m(torch.ones((1, 7), dtype=torch.int64), pixel_values=torch.ones((1, 3, 8, 8)))
        m(torch.ones((1, 1), dtype=torch.int64))
        m(torch.ones((1, 1), dtype=torch.int64))
    kwargs = obs.infer_arguments()
    assert set(kwargs) == {"input_ids", "pixel_values"}
    assert kwargs["pixel_values"].shape[1:] == (3, 8, 8)
    ds = obs.infer_dynamic_shapes()
    assert ds["input_ids"] == {1: Dim.DYNAMIC}
    assert 0 in ds["pixel_values"]  # seen as 1 and 0: dynamic (and the engine warns that torch.export specialises)
    assert any("pixel_values" in w for w in obs.warnings())


def test_remove_inputs():
    m = Vision()
    obs = InputObserver()
    with obs(m):
        m(torch.ones((1, 7), dtype=torch.int64), pixel_values=torch.ones((1, 3, 8, 8)))
        m(torch.ones((2, 3), dtype=torch.int64), pixel_values=torch.ones((2, 3, 8, 8)))
    assert obs.remove_inputs(["pixel_values"]) >= 1
    args = obs.infer_arguments()  # only the positional input_ids is left: a tuple
    assert isinstance(args, tuple) and len(args) == 1
    ds = obs.infer_dynamic_shapes()
    assert ds == ({0: Dim.DYNAMIC, 1: Dim.DYNAMIC},)
    # the first call has batch 1, which torch.export specialises: export from the second (batch 2)
    ep = torch.export.export(m, obs.infer_arguments(1), dynamic_shapes=ds)
    x = torch.ones((3, 4), dtype=torch.int64)
    torch.testing.assert_close(ep.module()(x), m(x))


@dataclasses.dataclass
class Cache:
    keys: list
    values: list


pytree.register_pytree_node(
    Cache,
    lambda c: ([c.keys, c.values], ["keys", "values"]),
    lambda children, context: Cache(*children),
    serialized_type_name=f"{__name__}.Cache",
    flatten_with_keys_fn=lambda c: ([(pytree.GetAttrKey("keys"), c.keys), (pytree.GetAttrKey("values"), c.values)],
                                    ["keys", "values"]),
)


class Decoder(torch.nn.Module):
    def forward(self, x, cache):
        k = torch.cat([cache.keys[0], x], dim=1)
        v = torch.cat([cache.values[0], x], dim=1)
        return (k * v).sum(dim=1)


def test_registered_node_is_rebuilt_and_exports():
    m = Decoder()
    obs = InputObserver()
    with obs(m):
        for b, past in ((2, 3), (2, 4), (3, 5)):
            m(torch.randn(b, 1, 4), Cache([torch.randn(b, past, 4)], [torch.randn(b, past, 4)]))
    args = obs.infer_arguments()
    assert isinstance(args, tuple) and isinstance(args[1], Cache)  # positional: a tuple; the node's own type
    ds = obs.infer_dynamic_shapes(dim_names=True)
    assert isinstance(ds, tuple) and isinstance(ds[1], list)  # a custom node: the list of its children's specs
    assert ds[1][0][0][1] is ds[1][1][0][1]  # keys and values share the past length
    ep = torch.export.export(m, args, dynamic_shapes=ds)
    x, c = torch.randn(4, 1, 4), Cache([torch.randn(4, 6, 4)], [torch.randn(4, 6, 4)])
    torch.testing.assert_close(ep.module()(x, c), m(x, c))


def test_unregistered_class_is_refused_with_a_sentence():
    class Opaque:
        pass

    class M(torch.nn.Module):
        def forward(self, x, o=None):
            return x

    m, obs = M(), InputObserver()
    with pytest.raises(TypeError, match="register it as a pytree node"):
        with obs(m):
            m(torch.ones(2), Opaque())
    assert "forward" not in vars(m)
