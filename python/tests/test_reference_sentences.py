"""Every refusal the reference InputObservers raise, raised by hookscope's with the reference's sentence right after
``hookscope: `` and of the reference's type: each case is matched by the regex the references' own tests use
(yobx's and onnx-diagnostic's test_input_observer.py: ``assertRaisesRegex(RuntimeError, "Named argument 'y' has")``,
...), or for a refusal their tests do not try, by the start of the sentence their code writes. Where the reference is
installed (onnx-diagnostic 0.9.3, torch.onnx 2.15) the same scenario is run on it and must raise the same type with a
message the same regex matches; yobx, not installed, raises the cases marked yobx only (its code is the source of those
sentences)."""
import os
import re
import warnings

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")
onnx_diagnostic = pytest.importorskip("onnx_diagnostic.investigate.input_observer",
                                      reason="onnx-diagnostic is installed by tools/python_env.sh")
onnx = pytest.importorskip("onnx", reason="onnx is installed by tools/python_env.sh")
pytest.importorskip("onnxruntime", reason="onnxruntime is installed by tools/python_env.sh")

import torch.onnx  # noqa: E402

import hookscope  # noqa: E402
from hookscope.torch import InputObserver, NotImplementedInferenceError  # noqa: E402

OD = onnx_diagnostic.InputObserver
TORCH = torch.onnx.InputObserver


class TwoInputs(torch.nn.Module):
    def forward(self, x, y):
        return x + y


class Optional(torch.nn.Module):
    def forward(self, x=None, y=None):
        return x if y is None else (y[0] if isinstance(y, list) else y)


class Listed(torch.nn.Module):
    def forward(self, x, y):
        return x - y[0]


class Constant(torch.nn.Module):
    def forward(self, x, y, add=True):
        return x + y if add else x - y


class Variadic(torch.nn.Module):
    def forward(self, a, *args, **kwargs):
        return a


class Keywords(torch.nn.Module):
    def forward(self, x, **kwargs):
        return x


def _observed(cls, model, calls, **options):
    obs = cls(**options)
    with obs(model):
        for args, kwargs in calls:
            model(*args, **kwargs)
    return obs


def nothing_captured(cls):
    return cls().infer_dynamic_shapes()


def nothing_stored(cls):
    obs, m = cls(), TwoInputs()
    with obs(m, store_n_calls=0):
        m(torch.ones(2, 3), torch.ones(1, 3))
    return obs.infer_arguments()


def remove_before_any_block(cls):
    return cls().remove_inputs(["x"])


def remove_after_storing_none(cls):
    obs, m = cls(), TwoInputs()
    with obs(m, store_n_calls=0):
        m(torch.ones(2, 3), torch.ones(1, 3))
    return obs.remove_inputs(["x"])


def keyword_missing_in_best(cls):
    calls = [((), {"x": torch.randn(5, 6)})] + [((), {"y": torch.randn(1, 7)})] * 3
    return _observed(cls, Optional(), calls).infer_dynamic_shapes()


def named_leaves_differ(cls):
    calls = [((), {"x": torch.randn(5, 6)}), ((), {"x": torch.randn(5, 7), "y": [torch.randn(1, 7)]}),
             ((), {"x": torch.randn(5, 7), "y": [torch.randn(1, 7), torch.randn(1, 7)]})]
    return _observed(cls, Optional(), calls).infer_dynamic_shapes()


def positional_leaves_differ(cls):
    calls = [((torch.randn(5, 7), [torch.randn(1, 7)]), {}),
             ((torch.randn(5, 7), [torch.randn(1, 7), torch.randn(1, 7)]), {})]
    return _observed(cls, Listed(), calls).infer_dynamic_shapes()


def different_constants(cls):
    calls = [((), {"x": torch.randn(5, 6), "y": torch.randn(5, 6), "add": True}),
             ((), {"x": torch.randn(5, 6), "y": torch.randn(5, 6), "add": False})]
    return _observed(cls, Constant(), calls).infer_dynamic_shapes()


def missing_method(cls):
    with cls()(TwoInputs(), method_name="nonexistent"):
        pass


def candidate_of_another_type(cls):
    return _observed(cls, TwoInputs(), [((torch.randn(5, 6), torch.randn(1, 6)), {})]).infer_arguments("invalid")


def index_beyond_the_calls(cls):
    return _observed(cls, TwoInputs(), [((torch.randn(5, 6), torch.randn(1, 6)), {})]).infer_arguments(5)


def _with_missing(value_if_missing, model=None, args=(torch.randn(5, 6), torch.randn(1, 6))):
    def run(cls):
        m = model or TwoInputs()
        obs = cls(value_if_missing=value_if_missing)
        with obs(m):
            m(*args)
        return obs
    return run


class OptionalSecond(torch.nn.Module):
    def forward(self, x, y=None):
        return x


SCENARIOS = {
    # name: (scenario, the reference's type, the regex (the references' tests' own where they have one), the
    # references installed here that raise it[, the sentence's start where the regex is not it])
    "no inputs captured": (nothing_captured, RuntimeError, "No inputs were captured.", (OD, TORCH)),
    "a block storing no call": (nothing_stored, RuntimeError, "No inputs were captured.", (OD, TORCH)),
    "remove_inputs before any block": (remove_before_any_block, RuntimeError, "No input was captured", (OD,)),
    "remove_inputs after blocks storing none (yobx only)": (remove_after_storing_none, RuntimeError,
                                                            "No captured candidates.", ()),
    "a keyword the best candidate lacks": (keyword_missing_in_best, RuntimeError,
                                           "At least one call to the observed model", (OD, TORCH)),
    "a keyword's leaves differ": (named_leaves_differ, RuntimeError, "Named argument 'y' has", (OD, TORCH)),
    "a position's leaves differ": (positional_leaves_differ, RuntimeError, "Positional argument 1 has", (OD, TORCH)),
    "different constants": (different_constants, RuntimeError, "Two calls were made with different constant values",
                            (OD, TORCH)),
    "a missing method": (missing_method, ValueError, "does not have a method", (OD, TORCH), "Model type TwoInputs "),
    "an index of another type": (candidate_of_another_type, ValueError, "Unexpected type", (OD, TORCH)),
    "an index beyond the calls": (index_beyond_the_calls, RuntimeError, r"No stored input set for index=5<1\.",
                                  (OD, TORCH)),
    "a value_if_missing name outside the signature": (
        _with_missing({"nonexistent": torch.empty((0,))}), ValueError, "Unexpected keyword argument", (OD, TORCH)),
    "a value_if_missing position outside the signature": (
        _with_missing({10: torch.empty((0,))}), ValueError, "Unexpected keyword argument", (OD, TORCH)),
    "a value_if_missing position beyond a call's arguments": (
        _with_missing({1: torch.empty((0,))}, OptionalSecond(), (torch.randn(5, 6),)), NotImplementedError,
        "Unexpected keyword argument", (OD, TORCH)),
    "a value_if_missing key of type float": (
        _with_missing({1.5: torch.empty((0,))}), TypeError, "Unexpected type", (OD, TORCH)),
}


def _variadic(names, calls):
    def run(cls):
        return _observed(cls, Variadic(), calls).remove_inputs(names)
    return run


def _args_as_one(cls):
    calls = [((torch.ones(2, 3), torch.ones(2)), {"extra": torch.ones(1)}),
             ((torch.ones(3, 3), torch.ones(3)), {"extra": torch.ones(2)})]
    return _observed(cls, Variadic(), calls).infer_arguments()


def _keyword_collision(cls):
    calls = [((torch.ones(2, 3),), {"kwargs": torch.ones(1), "other": torch.ones(2)}),
             ((torch.ones(3, 3),), {"kwargs": torch.ones(2), "other": torch.ones(3)})]
    return _observed(cls, Keywords(), calls).infer_dynamic_shapes()


def _ranks_differ(cls):
    calls = [((torch.randn(2, 3), torch.randn(1, 3)), {}), ((torch.randn(2, 3, 4), torch.randn(1, 3)), {})]
    return _observed(cls, OptionalSecond(), calls).infer_dynamic_shapes()


class FourInputs(torch.nn.Module):
    def forward(self, x, y=None, z=None, w=None):
        return x


def _not_aligned(cls):
    """The best candidate (most leaves) gives y as None, another call gives it as a list of two tensors."""
    calls = [((torch.ones(2, 3), [torch.ones(2), torch.ones(2)]), {}),
             ((torch.ones(3, 3), None, torch.ones(3), torch.ones(3)), {})]
    return _observed(cls, FourInputs(), calls).infer_dynamic_shapes()


def test_calls_the_references_cannot_align_on_the_best_candidate_get_an_answer():
    """Where the references raise NotImplementedError ("... the number of input tensors are not the same in every set
    of inputs"), the best candidate's left-out argument takes the structure of a call giving it (rule B5)."""
    with pytest.raises(NotImplementedError, match="the number of input tensors are not the same"):
        _not_aligned(OD)
    shapes = _not_aligned(InputObserver)
    assert isinstance(shapes, tuple) and len(shapes) == 4 and shapes[1] is not None


calls_two = [((torch.ones(2, 3), torch.ones(2, 3)), {}), ((torch.ones(3, 3), torch.ones(3, 3)), {})]
SCENARIOS.update({
    "removing *args (yobx only)": (_variadic(["args"], calls_two), ValueError, "Cannot remove variadic", ()),
    "removing **kwargs (yobx only)": (_variadic(["kwargs"], calls_two), ValueError, "Cannot remove variadic", ()),
    "*args and keywords as one dict": (_args_as_one, RuntimeError,
                                       r"Cannot return arguments as a single tuple or a single dictionary because of "
                                       r"'\*args' in the function signature\.", (OD, TORCH)),
    "a keyword named as **kwargs": (_keyword_collision, ValueError, "Keyword argument name collision: received a "
                                    "keyword argument 'kwargs'", (OD, TORCH)),
    "ranks that differ": (_ranks_differ, RuntimeError, "All shapes in shape_list must have the same rank", (OD, TORCH)),
})


def _raised(run, cls):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            run(cls)
        except Exception as e:  # noqa: BLE001 - the table says which type
            return e
    pytest.fail(f"{cls.__module__}.{cls.__name__} raised nothing")


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_refusal_has_the_references_sentence_and_type(name):
    run, expected, regex, references, *start = SCENARIOS[name]
    ours = _raised(run, InputObserver)
    assert isinstance(ours, expected), (type(ours).__mro__, expected)
    text = str(ours)
    assert text.startswith("hookscope: "), text
    assert re.search(regex, text), (regex, text)
    assert re.match(re.escape(start[0]) if start else regex, text[len("hookscope: "):]), text  # right after it
    assert ours.sentence == text[len("hookscope: "):]
    for reference in references:
        theirs = _raised(run, reference)
        assert isinstance(theirs, expected) and isinstance(ours, type(theirs)), (type(theirs), type(ours).__mro__)
        assert re.search(regex, str(theirs)), (reference.__module__, str(theirs))


def test_a_tensor_count_the_model_does_not_expect(tmp_path):
    """check_discrepancies: the references' RuntimeError "There are (N) tensors but the model expects M."."""
    h = onnx.helper
    graph = h.make_graph([h.make_node("Identity", ["x"], ["out"])], "g",
                         [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["b", 3])],
                         [h.make_tensor_value_info("out", onnx.TensorProto.FLOAT, ["b", 3])])
    path = os.fspath(tmp_path / "one_input.onnx")
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 18)], ir_version=10), path)
    regex = r"There are \(2\) tensors but the model expects 1\."
    for cls in (InputObserver, OD):
        obs = _observed(cls, TwoInputs(), [((torch.randn(2, 3), torch.randn(2, 3)), {})])
        obs.infer_dynamic_shapes()  # the reference aligns the stored calls there, and checks only aligned ones
        with pytest.raises(RuntimeError, match=regex) as raised:
            obs.check_discrepancies(path)
        if cls is InputObserver:
            assert isinstance(raised.value, hookscope.InferenceError) and re.match(regex, raised.value.sentence)


def test_engine_refusals_keep_their_kind_and_facts():
    """The sentence is composed from the engine's facts; the error still carries them (code may decide on them)."""
    error = _raised(named_leaves_differ, InputObserver)
    assert isinstance(error, hookscope.InferenceError)
    assert error.kind == "leaf_count_differs"
    assert error.facts == {"argument": "y", "count": 2, "previous": 1, "call": 2}
    positional = _raised(positional_leaves_differ, InputObserver)
    assert positional.facts["position"] == 1 and positional.sentence.startswith("Positional argument 1 has 2 tensors")


def test_not_implemented_refusal_is_both_types():
    assert issubclass(NotImplementedInferenceError, NotImplementedError)
    assert issubclass(NotImplementedInferenceError, hookscope.InferenceError)
    error = _raised(SCENARIOS["a value_if_missing position beyond a call's arguments"][0], InputObserver)
    assert type(error) is NotImplementedInferenceError
    assert error.facts == {"position": 1, "given": 1}
