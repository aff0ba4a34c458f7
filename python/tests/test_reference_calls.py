"""The references' API called as their users call it: code written for onnx-diagnostic's or torch.onnx's
InputObserver with only the import changed, and arguments the bad-argument table does not hold (0-d tensors where a
collection is wanted, lone surrogates, empty collections, mismatched structures). Each test is a case a user met,
and what the promise says of it."""
import collections
import math
import warnings

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")
reference = pytest.importorskip("onnx_diagnostic.investigate.input_observer",
                                reason="onnx-diagnostic is installed by tools/python_env.sh")

import hookscope  # noqa: E402
from hookscope.torch import InputObserver  # noqa: E402

PYBIND11 = ("incompatible function arguments", "Unable to cast", "incompatible constructor arguments")


class M(torch.nn.Module):
    def forward(self, x, y=None):
        return x * 2 if y is None else x + y


def observe(cls=InputObserver):
    m, obs = M(), cls()
    with obs(m):
        m(torch.ones(2, 3), y=torch.ones(2, 3))
        m(torch.ones(4, 3))
        m(torch.ones(5, 3), y=torch.ones(5, 3))
    return obs


def refused(call, error, name):
    """call() raises `error` with a sentence starting hookscope: that names `name`, never pybind11's."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(error) as e:
            call()
    text = str(e.value)
    assert text.startswith("hookscope:") and name in text and not any(p in text for p in PYBIND11), text


# --- check_discrepancies on real exports -------------------------------------------------------------------------
class NoneOutput(torch.nn.Module):
    def forward(self, x):
        return x + 1, None


class DictOutput(torch.nn.Module):
    def forward(self, x):
        return {"a": x * 2, "b": (x.sum(-1), None), "c": None}


@pytest.mark.parametrize("cls", [NoneOutput, DictOutput])
def test_check_discrepancies_skips_none_outputs_torch_onnx_leaves_out(cls):
    """torch.onnx.export(dynamo=True) leaves None outputs out of the graph; with skip_none=True (the default) the
    exact export must be SUCCESS, not 'not the same number of outputs'."""
    pytest.importorskip("onnxscript", reason="onnxscript is installed by tools/python_env.sh")
    m, obs = cls().eval(), InputObserver()
    with obs(m):
        for b in (2, 3, 5):
            m(torch.randn(b, 4))
    program = torch.onnx.export(m, obs.infer_arguments(), dynamic_shapes=obs.infer_dynamic_shapes(), dynamo=True)
    rows = obs.check_discrepancies(program)
    assert [r["SUCCESS"] for r in rows] == [True] * 3, rows
    assert all("error" not in r for r in rows)
    # skip_none=False: a None output torch gave and the model has not is reported, not compared away.
    assert all(r["SUCCESS"] is False for r in obs.check_discrepancies(program, skip_none=False))


def test_check_discrepancies_by_torch_onnx_keywords():
    """torch.onnx's check_discrepancies names its model onnx_program: code written for it passes it by that name."""
    pytest.importorskip("onnxscript", reason="onnxscript is installed by tools/python_env.sh")
    import onnxruntime

    m, obs = NoneOutput().eval(), InputObserver()
    with obs(m):
        for b in (2, 3):
            m(torch.randn(b, 4))
    program = torch.onnx.export(m, obs.infer_arguments(), dynamic_shapes=obs.infer_dynamic_shapes(), dynamo=True)
    session = lambda model: onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])  # noqa: E731
    rows = obs.check_discrepancies(onnx_program=program, atol=1e-4, rtol=0.1, progress_bar=False,
                                   initializer=session, skip_none=True)
    assert [r["SUCCESS"] for r in rows] == [True, True], rows
    refused(lambda: obs.check_discrepancies(program, onnx_program=program), TypeError, "onnx_program")
    refused(lambda: obs.check_discrepancies(), TypeError, "onnx_model")


def test_check_discrepancies_hist_keys_spell_the_thresholds_as_given(tmp_path):
    """onnx-diagnostic's rows key a count by f">{h}" of the value given: hist=(1, 0.5) gives ">1", not ">1.0"; a
    threshold given twice is one key, counted once."""
    pytest.importorskip("onnxscript", reason="onnxscript is installed by tools/python_env.sh")
    m, obs = NoneOutput().eval(), InputObserver()
    with obs(m):
        for b in (2, 3):
            m(torch.randn(b, 4))
    program = torch.onnx.export(m, obs.infer_arguments(), dynamic_shapes=obs.infer_dynamic_shapes(), dynamo=True)
    rows = obs.check_discrepancies(program, hist=(1, 0.5, 0, 0))
    assert all({">1", ">0.5", ">0"} <= set(r) and ">1.0" not in r for r in rows), rows

    class Shifted(torch.nn.Module):  # every output element 1 away from NoneOutput's
        def forward(self, x):
            return x + 2, None

    shifted = torch.onnx.export(Shifted().eval(), obs.infer_arguments(), dynamic_shapes=obs.infer_dynamic_shapes(),
                                dynamo=True)
    twice = obs.check_discrepancies(shifted, hist=(0.5, 0.5))
    assert [r[">0.5"] for r in twice] == [r["n"] for r in twice] == [8, 12], twice


# --- remove_inputs and info ----------------------------------------------------------------------------------------
def test_remove_inputs_info_forgets_the_removed_input_as_the_reference():
    """onnx-diagnostic's info drops a removed input from every candidate and from signature_names; code reading
    info after remove_inputs must see the same."""
    ours, theirs = observe(), observe(reference.InputObserver)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours.remove_inputs(["y"])
        theirs.remove_inputs(["y"])
    assert ours.info.signature_names == theirs.info.signature_names == ["x"]
    for a, b in zip(ours.info.inputs, theirs.info.inputs):
        assert list(a.kwargs) == list(b.kwargs) == []
        assert len(a.args) == len(b.args) == 1
        assert len(a) == len(b) == 1
    a, b = ours.infer_arguments(), theirs.infer_arguments()
    assert type(a) is type(b) and len(a) == len(b) == 1


def test_select_and_phases_after_remove_inputs_keep_it_removed():
    """select() and phases() build observers from the stored calls as observed: the removed input came back."""
    obs = observe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        obs.remove_inputs(["y"])
    expected = obs.infer_dynamic_shapes()
    assert obs.select(lambda args, kwargs: True).infer_dynamic_shapes() == expected
    assert [p.dynamic_shapes for p in obs.phases()] == [expected]
    assert obs.select(lambda args, kwargs: True).info.signature_names == ["x"]


def test_info_candidates_map_leaves_to_arguments_as_the_references():
    """position_to_args_kwargs and n_tensors_for_args_kwargs are public properties of both references' candidates."""
    class Nested(torch.nn.Module):
        def forward(self, x, pair=None, y=None):
            return x

    calls = [((torch.ones(2, 3), (torch.ones(2), torch.ones(2))), {"y": torch.ones(2, 1)}),
             ((torch.ones(3, 3), (torch.ones(3), torch.ones(3))), {"y": torch.ones(3, 1)})]
    infos = []
    for cls in (InputObserver, reference.InputObserver):
        m, obs = Nested(), cls()
        with obs(m):
            for args, kwargs in calls:
                m(*args, **kwargs)
        infos.append(obs.info)
    for ours, theirs in zip(infos[0].inputs, infos[1].inputs):
        assert ours.n_tensors_for_args_kwargs == theirs.n_tensors_for_args_kwargs == {0: 1, 1: 2, "y": 1}
        assert ours.position_to_args_kwargs == theirs.position_to_args_kwargs == [0, 1, 1, "y"]


# --- needs_backed_size_oblivious ----------------------------------------------------------------------------------
def test_needs_backed_size_oblivious_takes_args_kwargs_as_infer_arguments_gives_them():
    """The docstring takes (args, kwargs) as infer_arguments(as_args_kwargs=True) gives them: the answer must be the
    one of the dict form, not False because the structures were not matched."""
    m, obs = M(), InputObserver()
    with obs(m):
        m(torch.ones(1, 3), y=torch.ones(1, 3))
        m(torch.ones(2, 3), y=torch.ones(2, 3))
    ds = obs.infer_dynamic_shapes()
    assert obs.needs_backed_size_oblivious(obs.infer_arguments(), ds) is True
    assert obs.needs_backed_size_oblivious(obs.infer_arguments(as_args_kwargs=True), ds) is True


def test_needs_backed_size_oblivious_refuses_mismatched_structures():
    """Arguments whose structure is not the dynamic shapes' are refused, not answered False."""
    obs = observe()
    refused(lambda: obs.needs_backed_size_oblivious([torch.ones(1, 3)], obs.infer_dynamic_shapes()), ValueError,
            "dynamic_shapes")
    refused(lambda: obs.needs_backed_size_oblivious(obs.infer_arguments(), [{0: None}]), ValueError,
            "dynamic_shapes")


# --- hostile arguments beyond the bad-argument table -------------------------------------------------------------
ZERO_D = torch.tensor(1)


@pytest.mark.parametrize("call, name", [
    (lambda obs, f: obs.infer_dynamic_shapes(set_batch_dimension_for=ZERO_D), "set_batch_dimension_for"),
    (lambda obs, f: obs.remove_inputs(ZERO_D), "input_names"),
    (lambda obs, f: obs.check_discrepancies(f, hist=torch.tensor(0.1)), "hist"),
    (lambda obs, f: hookscope.infer(ZERO_D), "paths"),
    (lambda obs, f: hookscope.infer([f], batch=ZERO_D), "batch"),
    (lambda obs, f: hookscope.infer([f], remove_inputs=ZERO_D), "remove_inputs"),
    (lambda obs, f: hookscope.merge_summaries(ZERO_D), "summaries"),
    (lambda obs, f: hookscope.InferredArguments(None, 0, ZERO_D), "warnings"),
], ids=["set_batch_dimension_for", "remove_inputs", "hist", "infer-paths", "infer-batch", "infer-remove_inputs",
        "merge_summaries", "InferredArguments-warnings"])
def test_a_0d_tensor_where_a_collection_is_wanted(tmp_path, call, name):
    """A 0-d tensor is a Collection (it has __len__ and __iter__) but iterating it raises torch's own TypeError
    ('iteration over a 0-d tensor'), which named no parameter."""
    obs = observe()
    path = tmp_path / "forward.jsonl"
    obs.write_records(path)
    refused(lambda: call(obs, path), TypeError, name)


@pytest.mark.parametrize("call, name", [
    (lambda f: hookscope.infer([f], function="M.forward\udcff"), "function"),
    (lambda f: hookscope.summarize([f], function="\udcff"), "function"),
    (lambda f: hookscope.infer([f], remove_inputs=["y\udcff"]), "remove_inputs"),
    (lambda f: hookscope.merge_summaries([hookscope.summarize([f]) + "\udcff"]), "summaries"),
    (lambda f: hookscope.merge_summaries([hookscope.summarize([f])], function="\udcff"), "function"),
], ids=["infer-function", "summarize-function", "remove_inputs", "merge_summaries", "merge_summaries-function"])
def test_a_lone_surrogate_str_is_refused_with_hookscopes_sentence(tmp_path, call, name):
    """A str that is not UTF-8 (a lone surrogate, as decode_text gives for bytes that are not UTF-8) leaked pybind11's
    'incompatible function arguments': names the library makes are always text."""
    path = tmp_path / "forward.jsonl"
    observe().write_records(path)
    refused(lambda: call(path), ValueError, name)


@pytest.mark.parametrize("dim_names", [{"x": {0: "b\udcff"}}, {"x\udcff": {0: "b"}}], ids=["label", "input"])
def test_dim_names_a_lone_surrogate_is_refused_with_hookscopes_sentence(dim_names):
    """A label that is not UTF-8 leaked pybind11's 'is_dim_label(): incompatible function arguments'."""
    obs = observe()
    refused(lambda: obs.infer_dynamic_shapes(dim_names=dim_names), ValueError, "dim_names")
    refused(lambda: hookscope.shapes_options(dim_names=dim_names), ValueError, "dim_names")


@pytest.mark.parametrize("dim_names", [{"zz": {0: "b"}}, {"x": {99: "b"}}], ids=["no_such_input", "past_rank"])
def test_dim_names_that_name_nothing_are_not_silently_ignored(dim_names):
    obs = observe()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            obs.infer_dynamic_shapes(dim_names=dim_names)
        except (TypeError, ValueError) as e:
            assert str(e).startswith("hookscope:")
            return
    assert any("changes nothing" in str(w.message) for w in seen)


@pytest.mark.parametrize("value", [set(), [], "", (), frozenset()], ids=["set", "list", "str", "tuple", "frozenset"])
def test_dim_names_an_empty_collection_is_refused_not_ignored(value):
    """dim_names is True, False, None or a mapping: a non-empty set or list is refused, so an empty one must be too
    (it was taken as 'no names', silently)."""
    obs = observe()
    refused(lambda: obs.infer_dynamic_shapes(dim_names=value), TypeError, "dim_names")


def test_check_discrepancies_hist_a_mapping_is_refused(tmp_path):
    """hist is a sequence of thresholds: a dict was read as its keys."""
    obs = observe()
    refused(lambda: obs.check_discrepancies(tmp_path / "none.onnx", hist={0.1: "a"}), TypeError, "hist")


def test_write_records_unwritable_path_is_hookscopes_sentence(tmp_path):
    """A path in a directory that does not exist: the OSError's type is kept, its sentence starts hookscope: and
    names the parameter (it was Python's '[Errno 2] No such file or directory')."""
    obs = observe()
    refused(lambda: obs.write_records(tmp_path / "missing" / "x.jsonl"), FileNotFoundError, "path")
    refused(lambda: obs.write_records(""), FileNotFoundError, "path")


# --- drop-in differences the parity table does not list ----------------------------------------------------------
def test_set_batch_dimension_for_a_name_outside_the_signature_as_the_references():
    """Code shared by several models names every input any of them takes (`{"input_ids", "pixel_values"}`): the
    references accept it, hookscope too, with a warning that it changes nothing."""
    theirs = observe(reference.InputObserver).infer_dynamic_shapes(set_batch_dimension_for={"x", "pixel_values"})
    with pytest.warns(UserWarning, match=r"hookscope: set_batch_dimension_for: 'pixel_values' is not a parameter "
                      r"of the observed signature .*: it changes nothing"):
        ours = observe().infer_dynamic_shapes(set_batch_dimension_for={"x", "pixel_values"})
    assert ours == theirs


NT = collections.namedtuple("NT", "a b")


@pytest.mark.parametrize("value", [2**64, NT(torch.ones(2), 3), pytest.importorskip("numpy").int64(3)],
                         ids=["big_int", "namedtuple", "numpy_int"])
def test_observed_call_never_fails_because_of_the_observer(value):
    """Values the references' observers let through (an int >= 2**63, a namedtuple, a numpy scalar) never
    make the observed call fail."""
    obs = InputObserver()

    class Extra(torch.nn.Module):
        def forward(self, x, extra=None):
            return x * 2

    m = Extra()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with obs(m):
            out = m(torch.ones(2, 3), extra=value)
    torch.testing.assert_close(out, torch.ones(2, 3) * 2)


def test_hostile_values_that_held():
    """What the references' users pass and what held: numpy ints as counts, negative and huge indices, nan and inf
    tolerances, a generator of names (a collection once), bools as indices refused (the references read True as 1)."""
    np = pytest.importorskip("numpy")
    obs = observe()
    assert InputObserver(store_n_calls=np.int64(2)).store_n_calls == 2
    refused(lambda: obs.infer_arguments(2**70), RuntimeError, "index_or_args_or_kwargs")
    refused(lambda: obs.infer_arguments(-4), RuntimeError, "index_or_args_or_kwargs")
    refused(lambda: obs.infer_arguments(True), TypeError, "index_or_args_or_kwargs")
    refused(lambda: obs.check_discrepancies("x.onnx", atol=math.inf), ValueError, "atol")
    refused(lambda: obs.check_discrepancies("x.onnx", rtol=math.nan), ValueError, "rtol")
    refused(lambda: obs.infer_dynamic_shapes(set_batch_dimension_for=(n for n in ["x"])), TypeError,
            "set_batch_dimension_for")
