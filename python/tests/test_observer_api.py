"""hookscope.torch.InputObserver's API against the references': info (InputObserverInfo's attributes, with the tensors
given), is_empty, num_obs, method_name (another method, a submodule's, a missing one), remove_inputs (by name and
position, variadics refused, nothing removed), and a table of misuses run on onnx-diagnostic 0.9.3's observer and on
hookscope's: the same exception type (isinstance of the reference's) and a sentence of hookscope's."""
import warnings

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")
reference = pytest.importorskip("onnx_diagnostic.investigate.input_observer",
                                reason="onnx-diagnostic is installed by tools/python_env.sh")
import torch.onnx  # noqa: E402
import torch.utils._pytree as pytree  # noqa: E402
from torch.export import Dim  # noqa: E402

import hookscope  # noqa: E402
from hookscope.torch import InputCandidate, InputObserver, InputObserverInfo  # noqa: E402


class M(torch.nn.Module):
    def forward(self, x, y=None, flag: bool = False, scale: float = 1.0):
        out = x * scale if y is None else x + y
        return out, {"sum": out.sum(dim=-1)}

    def encode(self, x):
        return x.mean(dim=-1)


class Outer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = M()

    def forward(self, x):
        return self.inner(x, y=x * 2)[0] + self.inner.encode(x).unsqueeze(-1)


class Variadic(torch.nn.Module):
    def forward(self, x, *args, **kw):
        return x


def calls():
    g = torch.Generator().manual_seed(3)
    return [((torch.randn(2, 3, generator=g),), {"y": torch.randn(2, 3, generator=g), "flag": True}),
            ((torch.randn(4, 3, generator=g),), {"flag": True}),
            ((torch.randn(5, 3, generator=g), torch.randn(5, 3, generator=g)), {"flag": True})]


def observe(cls=InputObserver, **kwargs):
    m, obs = M(), cls(**kwargs)
    with obs(m):
        for args, kw in calls():
            m(*args, **kw)
    return m, obs


def test_info_is_the_references_input_observer_info():
    _, obs = observe()
    _, ref = observe(reference.InputObserver)
    info = obs.info
    assert isinstance(info, InputObserverInfo)
    assert len(info) == len(ref.info) == obs.num_obs == 3
    assert info.signature_names == ref.info.signature_names == ["x", "y", "flag", "scale"]
    assert info.default_values == ref.info.default_values
    assert info.value_if_missing == ref.info.value_if_missing == {}
    assert info.args_name_and_position is None and info.kwargs_name is None
    assert len(info.latencies) == len(info.flat_outputs) == len(info.outputs_specs) == 3
    assert all(isinstance(t, float) and t > 0 for t in info.latencies)
    for ours, theirs in zip(info.outputs_specs, ref.info.outputs_specs):
        assert ours == theirs
    for ours, theirs in zip(info.flat_outputs, ref.info.flat_outputs):
        assert len(ours) == len(theirs)
        for a, b in zip(ours, theirs):
            torch.testing.assert_close(a, b)
    for ours, theirs in zip(info.inputs, ref.info.inputs):
        assert isinstance(ours, InputCandidate)
        assert len(ours) == len(theirs)
        assert ours.cst_kwargs == theirs.cst_kwargs == {"flag": True}
        assert len(ours.args) == len(theirs.args) and list(ours.kwargs) == list(theirs.kwargs)
        for a, b in zip(ours.flat_list, theirs.flat_list):
            torch.testing.assert_close(a, b)
        assert ours.spec == theirs.spec
        assert "InputCandidate(args=" in ours.str_obs() and "cst_kwargs={'flag': True}" in ours.str_obs()
        assert str(ours).startswith("InputCandidate(")


def test_info_round_trip_gives_the_tensors_given():
    """info's tensors equal (and are copies of) what each call received; aligned lists hold None where a call left an
    input out."""
    _, obs = observe()
    info = obs.info
    for (args, kw), cand in zip(calls(), info.inputs):
        given = [t for t in pytree.tree_leaves((args, kw)) if isinstance(t, torch.Tensor)]
        assert len(cand.flat_list) == len(given)
        for a, b in zip(cand.flat_list, given):
            torch.testing.assert_close(a, b)
            assert a.data_ptr() != b.data_ptr()
    assert [[t is None for t in c.aligned_flat_list] for c in info.inputs] == [[False, False], [False, True],
                                                                              [False, False]]
    assert [c.n_aligned_tensors for c in info.inputs] == [2, 2, 2]
    m = M()
    for (args, kw), outputs, spec in zip(calls(), info.flat_outputs, info.outputs_specs):
        expected = m(*args, **kw)
        rebuilt = pytree.tree_unflatten(outputs, spec)
        torch.testing.assert_close(rebuilt, expected)


def test_info_before_and_after_observing():
    obs = InputObserver()
    assert obs.info is None and obs.engine_info is None
    assert obs.is_empty() and obs.num_obs == 0 and obs.num_obs() == 0
    m = M()
    with obs(m):
        pass
    assert obs.is_empty() and len(obs.info) == 0
    with obs(m):
        m(torch.ones(2, 3))
    assert not obs.is_empty() and obs.num_obs() == 1 and len(obs.info) == 1
    assert set(obs.engine_info) >= {"calls", "best_candidate", "parameters"}


def test_method_name_another_method():
    m, obs = M(), InputObserver()
    with obs(m, method_name="encode"):
        m.encode(torch.ones(2, 3))
        m.encode(torch.ones(3, 5))
    assert "encode" not in vars(m)  # restored
    assert obs.infer_dynamic_shapes() == ({0: Dim.DYNAMIC, 1: Dim.DYNAMIC},)
    assert obs.info.signature_names == ["x"]


def test_method_name_a_submodules_method():
    outer, obs = Outer(), InputObserver()
    with obs(outer.inner, method_name="encode"):
        outer(torch.ones(2, 3))
        outer(torch.ones(4, 3))
    assert obs.num_obs == 2
    assert obs.infer_dynamic_shapes() == ({0: Dim.DYNAMIC},)
    assert "encode" not in vars(outer.inner)


def test_method_name_missing_or_not_a_method():
    m = M()
    with pytest.raises(ValueError, match=r"^hookscope: Model type M does not have a method 'decode'\."):
        with InputObserver()(m, method_name="decode"):
            pass
    m.table = 3
    with pytest.raises(ValueError, match="hookscope: method_name: .*table is not a method"):
        with InputObserver()(m, method_name="table"):
            pass
    with pytest.raises(TypeError, match="hookscope: method_name: expected a str"):
        with InputObserver()(m, method_name=None):
            pass


def test_remove_inputs_by_name_and_position():
    for names in (["y"], [1]):
        _, obs = observe()
        assert obs.remove_inputs(names) >= 1
        assert "y" not in obs.infer_arguments()
        ds = obs.infer_dynamic_shapes()
        assert "y" not in ds


def test_remove_inputs_nothing_removed_warns_and_returns_0():
    _, obs = observe()
    with pytest.warns(UserWarning, match="hookscope: remove_inputs: no stored call holds \\['zzz'\\]"):
        assert obs.remove_inputs(["zzz"]) == 0


def test_remove_inputs_refuses_a_str_and_the_variadics():
    _, obs = observe()
    with pytest.raises(TypeError, match="hookscope: input_names: .*str 'y'"):
        obs.remove_inputs("y")
    v, obs = Variadic(), InputObserver()
    with obs(v):
        v(torch.ones(2, 3), torch.ones(2), extra=torch.ones(1))
    for name in ("args", "kw", 1):
        with pytest.raises(ValueError, match=r"^hookscope: Cannot remove variadic "):
            obs.remove_inputs([name])


def test_infer_arguments_negative_index_counts_from_the_end():
    _, obs = observe()
    _, ref = observe(reference.InputObserver)
    for i in (-1, -3):
        ours, theirs = obs.infer_arguments(i), ref.infer_arguments(i)
        assert list(ours) == list(theirs)
        torch.testing.assert_close(ours["x"], theirs["x"])


def test_infer_dynamic_shapes_dim_names_gives_dims_or_labels():
    _, obs = observe()
    ds = obs.infer_dynamic_shapes(dim_names={"x": {0: "batch"}, "y": {0: "batch"}})
    assert isinstance(ds["x"][0], type(Dim("batch"))) and ds["x"][0] is ds["y"][0]
    labels = obs.infer_dynamic_shapes(dim_names={"x": {0: "batch"}, "y": {0: "batch"}}, as_strings=True)
    assert labels["x"] == {0: "batch"} and labels["y"] == {0: "batch"}
    automatic = obs.infer_dynamic_shapes(dim_names=True, as_strings=True)
    assert automatic["x"][0] == automatic["y"][0] and isinstance(automatic["x"][0], str)
    assert obs.infer_dynamic_shapes(as_strings=True) == obs.infer_dynamic_shapes()  # unnamed: Dim.DYNAMIC


# --- misuses: the reference's exception type, hookscope's sentence ----------------------------------------------
def _none_captured(cls):
    return cls().infer_dynamic_shapes()


def _none_captured_arguments(cls):
    return cls().infer_arguments()


def _none_captured_remove(cls):
    return cls().remove_inputs(["x"])


def _empty_block(cls):
    obs = cls()
    with obs(M()):
        pass
    return obs.infer_arguments()


def _observe_with(value_if_missing):
    def run(cls):
        m, obs = M(), cls(value_if_missing=value_if_missing)
        with obs(m):
            m(torch.ones(2, 3))
            m(torch.ones(3, 3))
        return obs.infer_arguments()
    return run


def _different_constants(cls):
    m, obs = M(), cls()
    with obs(m):
        m(torch.ones(2, 3), flag=True)
        m(torch.ones(3, 3), scale=2.0)
    return obs.infer_arguments()


def _index(value):
    def run(cls):
        _, obs = observe(cls)
        return obs.infer_arguments(value)
    return run


def _missing_method(cls):
    with cls()(M(), method_name="nope"):
        pass


def _varargs_as_one_dict(cls):
    v, obs = Variadic(), cls()
    with obs(v):
        v(torch.ones(2, 3), torch.ones(2), extra=torch.ones(1))
        v(torch.ones(3, 3), torch.ones(3), extra=torch.ones(2))
    return obs.infer_arguments()


def _remove_var_keyword(cls):
    v, obs = Variadic(), cls()
    with obs(v):
        v(torch.ones(2, 3), extra=torch.ones(1))
    return obs.remove_inputs(["kw"])


def _keyword_collision(cls):
    v, obs = Variadic(), cls()
    with obs(v):
        v(torch.ones(2, 3), kw=torch.ones(1), other=torch.ones(2))
        v(torch.ones(3, 3), kw=torch.ones(2), other=torch.ones(3))
    return obs.infer_dynamic_shapes()


MISUSES = {
    "no inputs captured (infer_dynamic_shapes)": (_none_captured, RuntimeError),
    "no inputs captured (infer_arguments)": (_none_captured_arguments, RuntimeError),
    "no inputs captured (remove_inputs)": (_none_captured_remove, RuntimeError),
    "an empty with block": (_empty_block, RuntimeError),
    "a value_if_missing key not in the signature": (_observe_with({"z": torch.ones(1)}), ValueError),
    "a float value_if_missing key": (_observe_with({1.5: torch.ones(1)}), TypeError),
    "a value_if_missing position beyond the signature": (_observe_with({7: torch.ones(1)}), ValueError),
    "different constants across calls": (_different_constants, RuntimeError),
    "an index beyond the stored calls": (_index(3), RuntimeError),
    "an index of type str": (_index("x"), ValueError),
    "an index of type list": (_index([torch.ones(2, 3)]), ValueError),
    "a missing method": (_missing_method, ValueError),
    "*args and keywords as one dict": (_varargs_as_one_dict, RuntimeError),
    "removing **kwargs": (_remove_var_keyword, ValueError),
    "a keyword named as **kwargs": (_keyword_collision, ValueError),
}


@pytest.mark.parametrize("name", sorted(MISUSES))
def test_misuse_raises_the_references_exception_type(name):
    run, expected = MISUSES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(expected) as theirs:
            run(reference.InputObserver)
        with pytest.raises(Exception) as ours:
            run(InputObserver)
    assert isinstance(ours.value, type(theirs.value)), (type(ours.value).__mro__, type(theirs.value))
    assert str(ours.value).startswith("hookscope: "), str(ours.value)


def test_hookscopes_error_classes_are_the_references_types_too():
    assert issubclass(hookscope.InferenceError, ValueError) and issubclass(hookscope.InferenceError, RuntimeError)
    assert issubclass(hookscope.ArgumentTypeError, TypeError) and issubclass(hookscope.ArgumentTypeError, ValueError)
    assert issubclass(hookscope.ArgumentValueError, ValueError)
    assert issubclass(hookscope.ArgumentValueError, RuntimeError)


@pytest.mark.parametrize("seed", range(20))
def test_info_round_trip_property(seed):
    """Random calls (1 to 6, random batch and width, y present or not, by position or by name): info has one candidate
    per stored call (store_n_calls bounds them), whose tensors equal the ones given, aligned lists with None exactly
    where y was left out, one latency and the outputs of each."""
    g = torch.Generator().manual_seed(seed)
    rnd = lambda n: int(torch.randint(1, n, (1,), generator=g))  # noqa: E731
    n_calls, store = rnd(7), rnd(5)
    given = []
    for _ in range(n_calls):
        b, w = rnd(6), rnd(4)
        x = torch.randn(b, w, generator=g)
        mode = rnd(4)  # 1: no y, 2: y by name, 3: y by position
        args, kw = ((x,), {}) if mode == 1 else ((x,), {"y": torch.randn(b, w, generator=g)}) if mode == 2 else (
            (x, torch.randn(b, w, generator=g)), {})
        given.append((args, kw))
    m, obs = M(), InputObserver(store_n_calls=store)
    with obs(m):
        for args, kw in given:
            m(*args, **kw)
    info = obs.info
    stored = given[:store]
    assert len(info) == len(stored) == obs.num_obs
    any_y = any(len(a) == 2 or "y" in kw for a, kw in stored)
    mixed = any(len(a) == 2 for a, _ in stored) and any("y" in kw for _, kw in stored)
    for (args, kw), cand, outputs, latency in zip(stored, info.inputs, info.flat_outputs, info.latencies):
        tensors = [*args, *kw.values()]
        assert len(cand.flat_list) == len(tensors)
        for a, b in zip(cand.flat_list, tensors):
            torch.testing.assert_close(a, b)
        has_y = len(args) == 2 or "y" in kw
        try:
            aligned = cand.aligned_flat_list
        except hookscope.InferenceError as e:  # y by position and by name: the references' refusal, RuntimeError
            assert mixed and isinstance(e, RuntimeError) and "must contain all the named arguments" in str(e)
            continue
        assert [t is None for t in aligned] == [False] + ([not has_y] if any_y else [])
        torch.testing.assert_close(pytree.tree_unflatten(outputs, info.outputs_specs[0]), m(*args, **kw))
        assert latency > 0


def test_value_if_missing_position_beyond_a_calls_arguments_raises_not_implemented_when_the_block_ends():
    """The references raise NotImplementedError in the observed call; hookscope's call runs and returns (observing
    never fails it) and the with block raises the same refusal when it ends: a NotImplementedError that is also
    hookscope's InferenceError, with the references' sentence; the call is not stored."""
    m, obs = M(), InputObserver(value_if_missing={1: torch.ones(2, 3)})
    results = []
    with pytest.raises(NotImplementedError) as raised:
        with obs(m):
            results.append(m(torch.ones(2, 3)))
    assert len(results) == 1
    assert isinstance(raised.value, hookscope.InferenceError) and raised.value.kind == "if_missing_position_not_given"
    assert str(raised.value).startswith("hookscope: Unexpected keyword argument k=1 provided as a value_if_missing")
    assert obs.num_obs == 0


def test_value_if_missing_refusal_is_a_warning_when_the_block_raises_its_own_error():
    m, obs = M(), InputObserver(value_if_missing={1: torch.ones(2, 3)})
    with pytest.warns(UserWarning, match="k=1 provided as a value_if_missing"):
        with pytest.raises(KeyError):
            with obs(m):
                m(torch.ones(2, 3))
                raise KeyError("the block's own")

@pytest.mark.parametrize("cls", [InputObserver, reference.InputObserver, torch.onnx.InputObserver],
                         ids=["hookscope", "onnx-diagnostic", "torch.onnx"])
def test_store_n_calls_zero_runs_the_block_and_stores_nothing(cls):
    """As the references: the model runs (its result returned), nothing is stored, an inference then refuses with
    "No inputs were captured.", and a later block stores its own store_n_calls."""
    m, obs = M(), cls()
    x = torch.randn(2, 3)
    with obs(m, store_n_calls=0):
        out, _ = m(x)
    torch.testing.assert_close(out, x)
    assert obs.num_obs() == 0 and len(obs.info) == 0
    for infer in (obs.infer_dynamic_shapes, obs.infer_arguments):
        with pytest.raises(RuntimeError, match=r"No inputs were captured\."):
            infer()
    with obs(m, store_n_calls=2):
        for b in (2, 3, 4):
            m(torch.randn(b, 3))
    assert obs.num_obs() == 2
    assert obs.infer_dynamic_shapes() == ({0: Dim.DYNAMIC},)


def test_store_n_calls_zero_in_the_constructor_is_every_block_s_default():
    m, obs = M(), InputObserver(store_n_calls=0)
    with obs(m):
        m(torch.randn(2, 3))
    assert obs.num_obs == 0
    with obs(m, store_n_calls=1):
        m(torch.randn(2, 3))
    assert obs.num_obs == 1
