"""InputObserver's recording path: every value torch's pytree accepts is observed without breaking the model's call
and rebuilt by infer_arguments with its exact type (a table of hostile values, then random pytrees); what cannot be
recorded leaves the call out with one warning; write_records round-trips through hookscope.infer."""
import collections
import dataclasses
import enum
import inspect
import json
import math
import random
import warnings

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")
import torch.utils._pytree as pytree  # noqa: E402

import hookscope  # noqa: E402
from hookscope.torch import InputObserver  # noqa: E402
from hookscope.torch import _values  # noqa: E402

Point = collections.namedtuple("Point", "x y")
Outer = collections.namedtuple("Outer", "p scale")


class Color(enum.Enum):
    RED = 1
    BLUE = 2


@dataclasses.dataclass
class Pair:
    first: torch.Tensor
    second: torch.Tensor


pytree.register_dataclass(Pair)


def same(a, b, path="x"):
    """a and b of exactly the same types, recursively, with equal contents (nan equal to nan)."""
    assert type(a) is type(b), f"{path}: {type(a)} is not {type(b)}"
    if isinstance(a, torch.Tensor):
        assert a.dtype == b.dtype and a.shape == b.shape, path
        assert bool(((a == b) | (a.isnan() & b.isnan()) if a.is_floating_point() else (a == b)).all()), path
    elif isinstance(a, float):
        assert (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b)), path
    elif isinstance(a, (tuple, list, collections.deque)):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            same(x, y, f"{path}.{i}")
        if isinstance(a, collections.deque):
            assert a.maxlen == b.maxlen, path
    elif isinstance(a, dict):
        assert list(a.keys()) == list(b.keys()), path
        assert [type(k) for k in a] == [type(k) for k in b], path
        for k in a:
            same(a[k], b[k], f"{path}.{k!r}")
        if isinstance(a, collections.defaultdict):
            assert a.default_factory is b.default_factory, path
    elif dataclasses.is_dataclass(a):
        for f in dataclasses.fields(a):
            same(getattr(a, f.name), getattr(b, f.name), f"{path}.{f.name}")
    else:
        assert a == b, path


def tensor_sum(v):
    return sum((t.float().sum() for t in pytree.tree_leaves(v) if isinstance(t, torch.Tensor)), torch.zeros(()))


class Echo(torch.nn.Module):
    """Returns something computed from its argument: the tensors' sum and the argument's non-tensor leaves."""

    def forward(self, x, v):
        return x + tensor_sum(v), [leaf for leaf in pytree.tree_leaves(v) if not isinstance(leaf, torch.Tensor)]


def nested(depth):
    v = torch.ones(2)
    for _ in range(depth):
        v = [v]
    return v


T = torch.arange(6.0).reshape(2, 3)
HOSTILE = [
    ("inf", float("inf")),
    ("minus_inf", float("-inf")),
    ("nan", float("nan")),
    ("minus_zero", -0.0),
    ("int_2_63", 2 ** 63),
    ("int_below_int64", -(2 ** 63) - 1),
    ("int_2_200", 2 ** 200),
    ("namedtuple", Point(T, torch.ones(3))),
    ("nested_namedtuple", Outer(Point(T, 1), 2.5)),
    ("ordered_dict", collections.OrderedDict([("b", T), ("a", torch.zeros(1))])),
    ("defaultdict_list", collections.defaultdict(list, {"a": T, "b": [1, 2]})),
    ("deque", collections.deque([T, 3], maxlen=4)),
    ("int_keys", {1: T, 0: torch.ones(2)}),
    ("enum_keys", {Color.RED: T, Color.BLUE: 2}),
    ("tuple_keys", {(1, 2): T, (3,): "z"}),
    ("mixed_keys", {1: T, "1": 2, True: 3.5, (0, "a"): None, Color.RED: torch.ones(1)}),
    ("none", None),
    ("empty_str", ""),
    ("non_utf8_str", b"a\xff\xfe".decode("utf-8", "surrogateescape")),
    ("bytes", b"\x00\xff"),
    ("bool", True),
    ("int_enum_value", Color.RED.value),
    ("dataclass", Pair(T, torch.ones(1, 2))),
    ("empty_tuple", ()),
    ("empty_list", []),
    ("empty_dict", {}),
    ("deep_nesting_50", nested(50)),  # 100 JSON levels: the record format holds values 125 deep
    ("float_tensor_with_nan", torch.tensor([float("nan"), float("inf"), -1.0])),
    ("bool_tensor", torch.tensor([True, False])),
    ("zero_dim_tensor", torch.zeros(0, 3)),
]


@pytest.mark.parametrize("value", [pytest.param(v, id=i) for i, v in HOSTILE])
def test_infer_arguments_rebuilds_hostile_values_exactly(value):
    m, obs = Echo(), InputObserver()
    x = torch.ones(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a warning would mean the call was left out
        with obs(m):
            out = m(x, value)
            m(torch.ones(3), value)
    expected = Echo().forward(x, value)
    same(out[1], expected[1])
    assert obs.num_obs == 2
    for i, given in ((0, x), (1, torch.ones(3))):
        same(bound(m, obs.infer_arguments(i, as_args_kwargs=True)), {"x": given, "v": value})
    chosen = obs.select(lambda a, kw: a[0].shape[0] == 3)
    same(bound(m, chosen.infer_arguments(0, as_args_kwargs=True)), {"x": torch.ones(3), "v": value})


@pytest.mark.parametrize("value", [float("inf"), float("nan"), 2 ** 64, Point(1, 2), {3: torch.ones(1)}],
                         ids=["inf", "nan", "int_2_64", "namedtuple", "int_keys"])
def test_results_of_hostile_values_are_recorded_without_breaking_the_call(value):
    class Returns(torch.nn.Module):
        def forward(self, x):
            return value, x * 2

    m, obs = Returns(), InputObserver()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with obs(m):
            out = m(torch.ones(2))
    same(out[0], value)
    stored = obs._calls[0]
    same(pytree.tree_unflatten(stored.flat_outputs, stored.outputs_spec), (value, torch.ones(2) * 2))


def test_int_keyed_dict_arguments_are_given_back_to_the_model():
    class ByLayer(torch.nn.Module):
        def forward(self, caches):
            return caches[0] + caches[1].sum()

    m, obs = ByLayer(), InputObserver()
    with obs(m):
        for n in (2, 3):
            m(caches={0: torch.ones(n, 4), 1: torch.ones(n, 4)})
    kwargs = obs.infer_arguments()
    assert list(kwargs["caches"]) == [0, 1]
    m(**kwargs)  # the observer's own arguments: no KeyError
    ds = obs.infer_dynamic_shapes()
    ep = torch.export.export(m, (), kwargs=kwargs, dynamic_shapes=ds)
    assert ep.module()(**kwargs).shape == kwargs["caches"][0].shape


def test_ordered_dict_input_gets_a_spec_torch_export_accepts():
    class Ordered(torch.nn.Module):
        def forward(self, inputs):
            return inputs["a"] * inputs["b"].sum()

    m, obs = Ordered(), InputObserver()
    with obs(m):
        for n in (2, 3, 4):
            m(inputs=collections.OrderedDict([("a", torch.ones(n, 3)), ("b", torch.ones(n + 1))]))
    kwargs = obs.infer_arguments()
    assert type(kwargs["inputs"]) is collections.OrderedDict
    ep = torch.export.export(m, (), kwargs=kwargs, dynamic_shapes=obs.infer_dynamic_shapes())
    other = collections.OrderedDict([("a", torch.ones(7, 3)), ("b", torch.ones(8))])
    assert torch.equal(ep.module()(inputs=other), m(other))


@pytest.mark.parametrize("value,reason", [
    (torch.ones(2, dtype=torch.complex64), "dtype torch.complex64"),
    (object(), "cannot record a value of type object"),
    ([torch.ones(1), {"k": (1, torch.zeros(1, dtype=torch.complex128))}], r"args\.1\.1\.k\.1"),
    (nested(200), "nest|deep|depth"),
], ids=["complex64", "unregistered_object", "path_named", "deep_nesting_200"])
def test_a_call_that_cannot_be_recorded_returns_and_is_left_out_with_one_warning(value, reason):
    m, obs = Echo(), InputObserver()
    with pytest.warns(UserWarning, match="Echo.forward") as record:
        with obs(m):
            m(torch.ones(2), torch.ones(1))  # recorded
            for _ in range(3):
                out = m(torch.ones(2), value)  # left out, the model still returns
    assert torch.equal(out[0], Echo().forward(torch.ones(2), value)[0])
    ours = [w for w in record if "hookscope" in str(w.message)]
    assert len(ours) == 1, [str(w.message) for w in ours]
    import re
    assert re.search(reason, str(ours[0].message)), str(ours[0].message)
    assert obs.num_obs == 1


def test_a_failure_inside_recording_leaves_the_call_out(monkeypatch):
    m, obs = Echo(), InputObserver(store_n_calls=10)
    with obs(m):
        m(torch.ones(2), 1)

    def broken(*a, **k):
        raise RuntimeError("the encoder broke")

    monkeypatch.setattr(_values, "build_template", broken)
    monkeypatch.setattr("hookscope.torch._observer.build_template", broken)
    with pytest.warns(UserWarning, match="the encoder broke") as record:
        with obs(m):
            out = m(torch.ones(5), {"new": "structure"})
            out2 = m(torch.ones(6), {"new": "structure"})
    assert torch.equal(out[0], torch.ones(5)) and torch.equal(out2[0], torch.ones(6))
    assert len([w for w in record if "hookscope" in str(w.message)]) == 1
    assert obs.num_obs == 1


def test_repeated_warnings_are_one_per_reason_by_its_facts_not_its_words():
    # A reason is the error's type, kind, path, sentence (else its arguments) and what is left out because of it.
    from hookscope.torch._codec import Unrecordable
    from hookscope import _engine
    obs = InputObserver()
    obs._function = "M.forward"

    def refused():  # the library's error: its sentence, no path
        try:
            _engine.ShapeEngine().add_call("not json")
        except Exception as e:
            return e
        raise AssertionError("the engine took a call that is not JSON")

    assert getattr(refused(), "sentence", None)
    reasons = [(lambda: Unrecordable("cannot record a value of type X", "args.0"), "the call is not recorded"),
               (lambda: Unrecordable("cannot record a value of type X", "args.1"), "the call is not recorded"),
               (lambda: RuntimeError("the encoder broke"), "the call is not recorded"),
               (lambda: ValueError("the encoder broke"), "the call is not recorded"),  # the same words, another type
               (lambda: RuntimeError("the encoder broke"), "the results of M.forward are not recorded"),
               (refused, "the call is not recorded")]
    with pytest.warns(UserWarning) as record:
        for _ in range(3):  # a new error object every time: one warning per reason
            for error, consequence in reasons:
                obs._warn(error(), consequence)
    assert len(record) == len(reasons), [str(w.message) for w in record]
    assert str(record[0].message) == ("hookscope: recording a call of M.forward: args.0: cannot record a value of "
                                      "type X (the call is not recorded)")


# --- random pytrees ---------------------------------------------------------------------------------------------
def new_slot(dims: dict) -> int:
    slots = dims.setdefault("slots", [])
    slots.append(len(slots))
    return slots[-1]


def bound(m, args_kwargs):
    """The arguments by parameter name: the engine may give a keyword argument positionally."""
    args, kwargs = args_kwargs
    return dict(inspect.signature(m.forward).bind(*args, **kwargs).arguments)


def random_tree(rng: random.Random, depth=0, dims=None, texts=("a", "\udcff")):
    """A random pytree of the kinds above; its tensors' sizes come from `dims` (one size per slot, varying per call)."""
    kinds = ["tensor", "tensor", "int", "float", "str", "bool", "none"]
    if depth < 3:
        kinds += ["tuple", "list", "dict", "namedtuple", "ordered", "intkeys", "dataclass"]
    kind = rng.choice(kinds)
    if kind == "tensor":
        rank = rng.randint(0, 3)
        dtype = rng.choice([torch.float32, torch.int64, torch.bool, torch.float16])
        return ("tensor", rank, dtype, new_slot(dims))
    if kind in ("int", "float", "str", "none", "bool"):
        leaf = {"int": rng.choice([-1, 2 ** 63, 7, 0]), "float": rng.choice([0.5, float("inf"), float("nan"), -0.0]),
                "str": rng.choice(texts + ("",)), "none": None, "bool": rng.choice([True, False])}[kind]
        return ("leaf", leaf)
    n = rng.randint(0, 3)
    children = [random_tree(rng, depth + 1, dims, texts) for _ in range(n)]
    if kind == "namedtuple":
        children = (children + [("leaf", 1), ("leaf", 2)])[:2]
    if kind == "dataclass":
        children = (children + [("tensor", 1, torch.float32, new_slot(dims)) for _ in range(2)])[:2]
    return (kind, children)


def realise(shape_tree, sizes):
    kind = shape_tree[0]
    if kind == "tensor":
        _, rank, dtype, slot = shape_tree
        size = sizes[slot]
        return torch.ones([size] + [2] * (rank - 1), dtype=dtype) if rank else torch.tensor(size, dtype=dtype)
    if kind == "leaf":
        return shape_tree[1]
    children = [realise(c, sizes) for c in shape_tree[1]]
    if kind == "tuple":
        return tuple(children)
    if kind == "list":
        return children
    if kind == "dict":
        return {f"k{i}": c for i, c in enumerate(children)}
    if kind == "ordered":
        return collections.OrderedDict((f"o{i}", c) for i, c in enumerate(children))
    if kind == "intkeys":
        return {i * 3: c for i, c in enumerate(children)}
    if kind == "namedtuple":
        return Point(*children)
    return Pair(*children)


class SumLeaves(torch.nn.Module):
    def forward(self, x, tree):
        return x.sum() + tensor_sum(tree)


@pytest.mark.parametrize("seed", range(300))
def test_random_pytrees_are_rebuilt_exactly(seed):
    rng = random.Random(seed)
    dims: dict = {}
    # A tensor beside the random part: a keyword argument of scalars only is a constant the reference drops.
    shape_tree = ("tuple", [random_tree(rng, dims=dims), ("tensor", 1, torch.float32, new_slot(dims))])
    slots = len(dims.get("slots", []))
    calls = [realise(shape_tree, [rng.randint(2, 5) for _ in range(slots)]) for _ in range(3)]
    m, obs = SumLeaves(), InputObserver()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with obs(m):
            for i, tree in enumerate(calls):
                m(torch.ones(i + 2), tree=tree)
    assert obs.num_obs == 3
    for i, tree in enumerate(calls):
        same(bound(m, obs.infer_arguments(i, as_args_kwargs=True)), {"x": torch.ones(i + 2), "tree": tree})


@pytest.mark.parametrize("seed", range(8))
def test_random_pytrees_export_with_the_inferred_dynamic_shapes(seed):
    rng = random.Random(1000 + seed)
    dims: dict = {}
    # Text only: torch.export parses the constants of its graph's code, which a surrogate breaks.
    parts = [random_tree(rng, 1, dims, texts=("a",)) for _ in range(2)]
    shape_tree = ("dict", parts + [("tensor", 2, torch.float32, new_slot(dims))])
    slots = len(dims["slots"])
    m, obs = SumLeaves(), InputObserver()
    with obs(m):
        for i in range(3):
            m(torch.ones(i + 2), tree=realise(shape_tree, [rng.randint(2, 6) for _ in range(slots)]))
    args, kwargs = obs.infer_arguments(as_args_kwargs=True)
    ep = torch.export.export(m, args, kwargs=kwargs, dynamic_shapes=obs.infer_dynamic_shapes())
    assert torch.allclose(ep.module()(*args, **kwargs), m(*args, **kwargs), equal_nan=True)


@pytest.mark.parametrize("seed", range(40))
def test_write_records_round_trips_through_hookscope_infer(seed, tmp_path):
    rng = random.Random(5000 + seed)
    dims: dict = {}
    shape_tree = ("dict", [random_tree(rng, 1, dims) for _ in range(3)] + [("tensor", 2, torch.int64, new_slot(dims))])
    slots = len(dims.get("slots", []))
    m, obs = SumLeaves(), InputObserver(store_n_calls=4)
    with obs(m):
        for i in range(4):
            m(torch.ones(i + 2), tree=realise(shape_tree, [rng.randint(1, 6) for _ in range(slots)]))
    path = tmp_path / "calls.jsonl"
    assert obs.write_records(path) == 4
    inferred = hookscope.infer(str(path), store_n_calls=None)
    assert inferred.to_json() == obs._dynamic_shapes().to_json()
    for i in range(4):
        ours = json.loads(obs._check().infer_arguments(candidate=i, as_args_kwargs=True).json)
        assert hookscope.infer_arguments(str(path), store_n_calls=4, index=i, as_args_kwargs=True).value == ours


def test_a_registered_transformers_cache_is_rebuilt_with_its_type_and_tensors(tiny_llama_cached):
    """A DynamicCache (registered as a pytree node by the fixture) given to forward: infer_arguments gives back a
    DynamicCache holding copies of the tensors that call was given, before the model appended to it."""
    model = tiny_llama_cached
    g = torch.Generator().manual_seed(3)
    obs = InputObserver()
    given = []
    with obs(model, store_n_calls=4), torch.no_grad():
        for b, p in ((1, 4), (2, 6)):
            cache = model(input_ids=torch.randint(0, 100, (b, p), generator=g), use_cache=True).past_key_values
            leaves_before = [t.clone() for t in pytree.tree_leaves(cache)]
            given.append(leaves_before)
            model(input_ids=torch.randint(0, 100, (b, 1), generator=g), cache=cache, use_cache=True)
    checked = 0
    for i in range(obs.num_obs):
        cache = obs.infer_arguments(i, as_args_kwargs=True)[1]["cache"]
        assert type(cache).__name__ == "DynamicCache"
        leaves = pytree.tree_leaves(cache)
        if "cache" not in obs._calls[i].snapshot[1]:  # a prefill: the engine's empty placeholder
            assert leaves and all(t.shape[2] == 0 for t in leaves)
            continue
        assert any(len(leaves) == len(g_) and all(torch.equal(a, b) for a, b in zip(leaves, g_)) for g_ in given)
        checked += 1
    assert checked == 2


@pytest.mark.parametrize("seed", range(100))
def test_flatten_call_gives_flattens_key_leaves_and_contexts(seed):
    """The recording path's flatten_call is flatten((args, kwargs)) without the outer levels: the same structure key
    (the template and rebuilding depend on it), the same leaves (the same objects) and contexts, in the same order."""
    rng = random.Random(9000 + seed)
    dims: dict = {}
    arg_trees = [random_tree(rng, 1, dims) for _ in range(rng.randint(0, 3))]
    kwarg_trees = [random_tree(rng, 1, dims) for _ in range(rng.randint(0, 3))]
    sizes = [rng.randint(0, 4) for _ in dims.get("slots", [])]
    args = tuple(realise(t, sizes) for t in arg_trees)
    kwargs = {f"k{i}": realise(t, sizes) for i, t in enumerate(kwarg_trees)}
    kwargs.update(rng.choice([{}, {"none": None}, {"t": torch.ones(2)}]))
    want_leaves, want_contexts, leaves, contexts = [], [], [], []
    want = _values.flatten((args, kwargs), want_leaves, want_contexts)
    assert _values.flatten_call(args, kwargs, leaves, contexts) == want
    assert len(leaves) == len(want_leaves) and all(a is b for a, b in zip(leaves, want_leaves))
    assert contexts == want_contexts
    rebuilt = _values.materialize(want, leaves, contexts)
    same(rebuilt, (args, kwargs))
