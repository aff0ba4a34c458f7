"""What Python code acts on is data, never the words of a message: a refusal of options carries the options (as this
front door's keywords) and its sentence in pieces; the warnings of an inference are str messages carrying their kind,
input, dim and phase; every exception of the library carries its sentence after the one "hookscope: " prefix; the
compiled classes' methods name their parameters from what the binding recorded, not from docstrings."""
import json
import pickle
import warnings

import pytest

import hookscope
from hookscope import _engine
from helpers import DATA


def engine_with_an_input_never_given():
    e = hookscope.ShapeEngine()
    e.set_parameters(json.dumps([{"name": "x"}, {"name": "y"}]))
    e.begin_recording()
    for batch in (2, 3):
        e.add_call(json.dumps({"args": [{"shape": [batch, 3], "dtype": "float32"}, None], "kwargs": []}))
    return e


def test_a_refusal_of_options_carries_them_as_data():
    with pytest.raises(hookscope.LoadError) as e:
        hookscope.infer([DATA / "encoder.jsonl"], batch=["input_ids"], batch_all=True)
    assert e.value.kind == "bad_option"
    assert e.value.options == ("batch", "batch_all")
    assert [option for _, option in e.value.pieces if option] == ["batch_dimension_for", "batch_dimension_for_all"]
    assert str(e.value) == "hookscope: batch and batch_all exclude each other"
    assert e.value.sentence == "batch and batch_all exclude each other"


def test_each_front_end_spells_the_options_of_one_sentence():
    with pytest.raises(hookscope.LoadError) as e:
        _engine.check_argument_options(candidate=0, avoid_specialization=True)
    assert str(e.value) == "hookscope: avoid_specialization and candidate exclude each other"  # the library's names
    keywords = _engine.front_door_keywords()
    assert keywords["candidate"] == "index" and keywords["batch_dimension_for"] == "batch"
    with pytest.raises(hookscope.LoadError) as spelled:
        hookscope.infer_arguments(["/nonexistent.jsonl"], index=0, avoid_specialization=True)
    assert str(spelled.value) == "hookscope: avoid_specialization and index exclude each other"


def test_the_torch_observer_spells_them_as_the_references_do():
    torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")
    from hookscope.torch import InputObserver

    class Model(torch.nn.Module):
        def forward(self, x):
            return x + 1

    model, observer = Model(), InputObserver()
    with observer(model):
        model(torch.ones(2, 3))
        model(torch.ones(3, 3))
    with pytest.raises(ValueError, match="^hookscope: avoid_specialization and index_or_args_or_kwargs exclude "):
        observer.infer_arguments(0, avoid_specialization=True)


def test_the_engine_refuses_what_it_used_to_choose_between():
    e = engine_with_an_input_never_given()
    with pytest.raises(hookscope.LoadError) as refused:
        e.infer_arguments(candidate=1, avoid_specialization=True)
    assert refused.value.kind == "bad_option"
    assert "avoid_specialization and candidate exclude each other" in str(refused.value)
    assert e.infer_arguments(candidate=1).call == 1


def test_warnings_are_messages_with_their_facts():
    ds = engine_with_an_input_never_given().infer_dynamic_shapes(batch_dimension_for=["y"])
    (w,) = ds.warnings
    assert isinstance(w, str) and w.startswith("hookscope: a batch dimension is asked for 'y'")
    assert (w.kind, w.input, w.dim, w.phase) == ("batch_dimension_unobserved", "y", None, "")
    back = pickle.loads(pickle.dumps(w))
    assert back == w and (back.kind, back.input) == (w.kind, w.input)
    assert ds.warnings_for("torch") == [w] and ds.warnings_for("torch")[0].kind == w.kind


def test_a_dim_seen_only_as_one_names_its_input_and_dim():
    e = hookscope.ShapeEngine()
    e.set_parameters(json.dumps([{"name": "x"}]))
    e.begin_recording()
    for n in (3, 4):
        e.add_call(json.dumps({"args": [{"shape": [1, n], "dtype": "float32"}], "kwargs": []}))
    kinds = {(w.kind, w.input, w.dim) for w in e.infer_dynamic_shapes(batch_all=True).warnings}
    assert ("dim_seen_below_two", "x", 0) in kinds


def test_profiles_say_which_dimension_split_them():
    ds = hookscope.infer([DATA / "decoder_kv.jsonl"], profiles="auto", dim_names=True)
    splits = [p["split"] for p in ds.tensorrt_profiles]
    if len(splits) == 1:
        assert splits == [None]
        return
    assert {s["label"] for s in splits} == {splits[0]["label"]}
    assert sorted(s["equals_one"] for s in splits) == [False, True]
    for p in ds.tensorrt_profiles:
        assert p["phase"].startswith(p["split"]["label"])


def decoder_engine(steps, **options):
    """A decoder's calls, (batch, sequence, past) each: the cache absent at the prefills."""
    def t(*shape):
        return {"shape": list(shape), "dtype": "float32"}

    e = hookscope.ShapeEngine(**options)
    e.set_parameters(json.dumps([{"name": "input_ids"}, {"name": "attention_mask"}, {"name": "past", "default": None}]))
    e.begin_recording()
    for b, s, p in steps:
        kwargs = [["input_ids", t(b, s)], ["attention_mask", t(b, p + s)]] + ([["past", t(b, 2, p, 4)]] if p else [])
        e.add_call(json.dumps({"args": [], "kwargs": kwargs}))
    return e


def test_profiles_name_the_stored_calls_they_cover():
    steps = [(1, 5, 0), (1, 1, 5), (1, 1, 6), (2, 4, 0), (2, 1, 4)]
    e = decoder_engine(steps, store_n_calls=None)
    profiles = e.infer_dynamic_shapes(profile_phases=True, dim_names=True).tensorrt_profiles
    assert [(p["split"]["equals_one"], p["call_indexes"], p["calls"]) for p in profiles] == [
        (False, [0, 3], 2), (True, [1, 2, 4], 3)]
    (every,) = e.infer_dynamic_shapes().tensorrt_profiles
    assert every["call_indexes"] == [0, 1, 2, 3, 4] and every["calls"] == 5
    # The indexes are the stored calls' (infer_arguments' candidate): none when the engine keeps no call.
    assert e.infer_arguments(candidate=profiles[0]["call_indexes"][1]).call == 3
    unkept = decoder_engine(steps, store_n_calls=None, keep_calls=False)
    profiles = unkept.infer_dynamic_shapes(profile_phases=True, dim_names=True).tensorrt_profiles
    assert [(p["call_indexes"], p["calls"]) for p in profiles] == [([], 2), ([], 3)]


def test_every_exception_has_the_prefix_once_and_its_sentence():
    with pytest.raises(hookscope.RecordError) as e:
        hookscope.read_records([DATA / "bad_not_json.jsonl"])
    assert str(e.value).startswith("hookscope: ") and str(e.value).count("hookscope: ") == 1
    assert str(e.value) == "hookscope: " + e.value.sentence


def test_compiled_methods_name_their_parameters_from_the_binding():
    table = hookscope.ShapeEngine.__dict__["__hookscope_parameters__"]
    assert tuple(table["add_call"]) == (("call_json", "str"),)
    assert ("batch_all", "bool") in tuple(table["infer_dynamic_shapes"])
    e = hookscope.ShapeEngine()
    e.set_parameters("[]")
    e.begin_recording()
    with pytest.raises(TypeError, match=r"^hookscope: ShapeEngine\.add_call: call_json: expected a str, got bytes"):
        e.add_call(b"{}")
    with pytest.raises(TypeError, match=r"^hookscope: ShapeEngine\.remove_inputs\(names\): the arguments do not fit"):
        e.remove_inputs(5)
    with pytest.raises(hookscope.FormatError) as bad:
        e.add_call("{not json")
    assert str(bad.value).startswith("hookscope: ShapeEngine.add_call(call_json='{not json'): ")
    assert str(bad.value).count("hookscope: ") == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(TypeError, match="do not fit"):
            hookscope.ShapeEngine(store_n_calls="three")


def test_compiled_methods_convert_what_pybind11_converts():
    """A value pybind11 converts (a numpy int for an int) still goes through: the binding's own refusals are
    BindingTypeError, so only a TypeError of no subclass is a refusal of the arguments."""
    numpy = pytest.importorskip("numpy")
    e = hookscope.ShapeEngine(store_n_calls=numpy.int64(3))
    e.set_parameters(json.dumps([{"name": "x"}]))
    e.begin_recording()
    for n in (2, 3):
        e.add_call(json.dumps({"args": [{"shape": [n, 4], "dtype": "float32"}], "kwargs": []}))
    ds = e.infer_dynamic_shapes(dim_labels=[("x", numpy.int64(0), "batch")])
    assert ds.to_json() == '[{"0":"batch"}]'
    with pytest.raises(_engine.BindingTypeError, match="^hookscope: candidate: "):
        e.infer_arguments(candidate=True)


def test_a_shape_list_changed_while_it_is_read_does_not_crash():
    template = _engine.CallTemplate(json.dumps({"args": [{"shape": [1], "dtype": "float32"}] * 2, "kwargs": []}))
    e = hookscope.ShapeEngine()
    e.set_parameters(json.dumps([{"name": "a"}, {"name": "b"}]))
    e.begin_recording()
    shapes = []

    class Clearing:
        def __index__(self):
            shapes.clear()
            return 2

    shapes.extend([(Clearing(),), (3,)])
    assert e.add_call_shapes(template, shapes)  # read from a snapshot of the list
    with pytest.raises(TypeError, match=r"^hookscope: ShapeEngine\.add_call_shapes\(template, shapes, keep, into\)"):
        e.add_call_shapes(template, [(2.5,), (3,)])


def test_a_quoted_refusal_keeps_its_sentence_and_its_facts():
    with pytest.raises(hookscope.FormatError) as bad:
        hookscope.ShapeEngine().add_call("{bad")
    assert str(bad.value) == "hookscope: " + bad.value.sentence
    with pytest.raises(hookscope.LoadError) as missing:
        hookscope.infer(["/nonexistent.jsonl"])
    assert missing.value.options == () and missing.value.pieces == []


def test_a_recording_warning_quotes_a_sentence_once():
    torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")
    from hookscope.torch import InputObserver

    class Model(torch.nn.Module):
        def forward(self, x):
            return x

    model, observer = Model(), InputObserver()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with observer(model):
            model(torch.ones(2, dtype=torch.complex64))
    texts = [str(w.message) for w in caught if "recording a call" in str(w.message)]
    assert texts and all(t.count("hookscope: ") == 1 for t in texts), texts
