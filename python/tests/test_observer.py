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
    assert any("pixel_values" in w for w in obs.shape_warnings())


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


def test_unregistered_class_is_left_out_with_a_sentence():
    class Opaque:
        pass

    class M(torch.nn.Module):
        def forward(self, x, o=None):
            return x

    m, obs = M(), InputObserver()
    with pytest.warns(UserWarning, match=r"M\.forward: args\.1: .*register it as a pytree node"):
        with obs(m):
            out = m(torch.ones(2), Opaque())  # the model's call still returns
    assert torch.equal(out, torch.ones(2)) and obs.num_obs == 0
    assert "forward" not in vars(m)


class TwoOutputs(torch.nn.Module):
    def forward(self, x, y):
        return {"sum": x.sum(dim=1), "cat": torch.cat([x, y], dim=1)}


def test_outputs_are_recorded_with_their_dynamic_dims(tmp_path):
    import hookscope
    m, obs = TwoOutputs(), InputObserver()
    shapes = ((2, 3, 1), (3, 4, 2), (4, 5, 2))
    with obs(m):
        for b, s, t in shapes:
            m(torch.ones(b, s), torch.ones(b, t))
    outputs = {o["name"]: o for o in obs.outputs()}
    assert sorted(outputs) == ["result.cat", "result.sum"]  # named by the inputs' flattening
    assert outputs["result.sum"]["shapes_seen"] == [[b] for b, _, _ in shapes]
    assert outputs["result.cat"]["shapes_seen"] == [[b, s + t] for b, s, t in shapes]
    # The batch takes x's label (the same values in every call); cat's dim 1 (4, 6, 7) is its own.
    assert [(d["dim"], d["label"]) for d in outputs["result.sum"]["dynamic_dims"]] == [(0, "x_dim_0")]
    assert [(d["dim"], d["label"]) for d in outputs["result.cat"]["dynamic_dims"]] == [(0, "x_dim_0"),
                                                                                      (1, "result_dim_1")]
    # The records carry the results: hookscope-shapes and hookscope.infer see the same outputs.
    path = tmp_path / "calls.jsonl"
    obs.write_records(path)
    assert all("result" in r for r in hookscope.read_records(path))
    assert [o["name"] for o in hookscope.infer(path, dim_names=True).outputs] == [o["name"] for o in obs.outputs()]


class WithText(torch.nn.Module):
    def forward(self, x, text):
        return x * len(text)


def test_write_records_elides_a_value_too_large_for_a_record_line(tmp_path):
    """A call whose record would be longer than the record format's limit is written with its largest value elided
    (the library's writer), the other calls as they are: every line reads back."""
    import hookscope
    limit = hookscope._engine.MAX_RECORD_LINE_BYTES
    m, obs = WithText(), InputObserver()
    with obs(m):
        m(torch.ones(2, 3), "x" * (limit + 10))
        m(torch.ones(3, 3), "small")
    path = tmp_path / "calls.jsonl"
    assert obs.write_records(path) == 2
    assert max(map(len, path.read_bytes().splitlines())) <= limit
    records, warnings = hookscope.read_records(path, with_warnings=True)
    assert warnings == [] and [r["args"][1] for r in records] == [
        {"opaque": "str", "length": limit + 10, "too_large": True}, {"str": "small"}]
    assert [r["args"][0]["shape"] for r in records] == [[2, 3], [3, 3]]


def test_a_call_that_raises_is_recorded_without_result():
    m, obs = TwoOutputs(), InputObserver()
    with obs(m):
        m(torch.ones(2, 3), torch.ones(2, 1))
        with pytest.raises(RuntimeError):
            m(torch.ones(2, 3), torch.ones(3, 1))  # cat: batch mismatch
    assert obs.num_obs == 2
    assert "result" in obs._calls[0].call and "result" not in obs._calls[1].call
    assert obs._calls[0].latency > 0 and obs._calls[1].latency is None and obs._calls[1].flat_outputs is None
    assert [tuple(t.shape) for t in obs._calls[0].flat_outputs] == [(2,), (2, 4)]


def test_an_unrecordable_result_warns_once_and_the_call_goes_on():
    class Opaque:
        pass

    class M(torch.nn.Module):
        def forward(self, x):
            return Opaque()

    m, obs = M(), InputObserver()
    with pytest.warns(UserWarning, match="results of M.forward are not recorded"):
        with obs(m):
            assert isinstance(m(torch.ones(2)), Opaque)
            m(torch.ones(3))
    assert obs.num_obs == 2 and obs.outputs() == []


def test_avoid_specialization_prefers_a_call_without_0_or_1():
    m, obs = Vision(), InputObserver()
    with obs(m):
        for b, s in ((1, 7), (2, 1), (3, 4)):
            m(input_ids=torch.ones((b, s), dtype=torch.int64))
    assert obs.infer_arguments()["input_ids"].shape == (1, 7)  # the reference's choice: the first call
    chosen = obs.infer_arguments(avoid_specialization=True)
    assert chosen["input_ids"].shape == (3, 4)  # every dynamic dim >= 2
    ds = obs.infer_dynamic_shapes()
    assert obs.needs_backed_size_oblivious() and not obs.needs_backed_size_oblivious(chosen, ds)
    # torch.export specialises the batch-1 call's dims and refuses the dynamic shapes; it accepts the chosen call's
    with pytest.raises(Exception, match="specializ|specialis"):
        torch.export.export(m, (), kwargs=obs.infer_arguments(), dynamic_shapes=ds)
    ep = torch.export.export(m, (), kwargs=chosen, dynamic_shapes=ds)
    x = torch.ones((5, 6), dtype=torch.int64)
    torch.testing.assert_close(ep.module()(input_ids=x), m(x))
    with pytest.raises(ValueError, match="avoid_specialization and index_or_args_or_kwargs exclude each other"):
        obs.infer_arguments(0, avoid_specialization=True)


def test_avoid_specialization_warns_about_the_dims_it_cannot_avoid():
    m, obs = Vision(), InputObserver()
    with obs(m):
        for b, s in ((1, 7), (2, 1)):
            m(input_ids=torch.ones((b, s), dtype=torch.int64))
    with pytest.warns(UserWarning, match="no stored call has every dynamic dimension >= 2") as record:
        obs.infer_arguments(avoid_specialization=True)
    assert "dimension" in str(record[0].message) and "input_ids" in str(record[0].message)
