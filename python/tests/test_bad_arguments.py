"""Hostile values for every parameter of every public function, class and method of hookscope and hookscope.torch,
enumerated with inspect (a new public function is covered as soon as it exists; one with a required parameter needs
a valid value in VALID). Each value either is refused with a TypeError or ValueError whose sentence starts
``hookscope:`` and names the parameter (never pybind11's "incompatible function arguments" or "Unable to cast"), or
is listed in ACCEPTED with what it means: no value is silently ignored."""
import inspect
import math
import warnings

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")

import hookscope  # noqa: E402
import hookscope.torch  # noqa: E402
from hookscope.torch import InputObserver  # noqa: E402

HOSTILE = {
    "None": None,
    "str": "input_ids",
    "float": 1.5,
    "negative": -1,
    "huge": 2**70,
    "nan": math.nan,
    "bytes": b"\xff\xfe",
    "dict": {"a": 1},
    "object": object(),
}


class Model(torch.nn.Module):
    def forward(self, input_ids, pixel_values=None):
        return input_ids.float().sum(dim=-1)


def observed() -> InputObserver:
    m, obs = Model(), InputObserver()
    with obs(m):
        m(torch.ones((2, 5), dtype=torch.int64), pixel_values=torch.ones(2, 3))
        m(torch.ones((3, 1), dtype=torch.int64))
    return obs


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("bad_arguments")
    records = d / "forward.jsonl"
    observed().write_records(records)
    onnx_file = d / "model.onnx"
    onnx = pytest.importorskip("onnx", reason="onnx is installed by tools/python_env.sh")
    h = onnx.helper
    graph = h.make_graph([h.make_node("Identity", ["pixel_values"], ["out"])], "g",
                         [h.make_tensor_value_info("input_ids", onnx.TensorProto.INT64, ["b", "s"]),
                          h.make_tensor_value_info("pixel_values", onnx.TensorProto.FLOAT, ["b", 3])],
                         [h.make_tensor_value_info("out", onnx.TensorProto.FLOAT, ["b", 3])])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 18)], ir_version=10), str(onnx_file))
    return {"records": records, "summary": hookscope.summarize([records]), "onnx": onnx_file}


def valid(files):
    """A valid value for each required parameter (per callable's qualified name)."""
    obs = observed()
    return {
        "read_records": {"paths": [files["records"]]},
        "load": {"paths": [files["records"]]},
        "summarize": {"paths": [files["records"]]},
        "merge_summaries": {"summaries": [files["summary"]]},
        "infer": {"paths": [files["records"]]},
        "infer_arguments": {"paths": [files["records"]]},
        "decode_text": {"encoded": "text"},
        "Opaque": {"type_name": "std::mutex"},
        "InferredArguments": {"value": None, "call": 0, "warnings": []},
        "to_value": {"obj": torch.ones(2)},
        "to_torch_dynamic_shapes": {"ds": hookscope.infer([files["records"]])},
        "to_torch_tensorrt_kwargs": {"ds": hookscope.infer([files["records"]])},
        "to_torch_tensorrt_inputs": {"ds": hookscope.infer([files["records"]])},
        "InputObserverInfo": {"observer": obs},
        "InputCandidate": {"observer": obs, "index": 0, "default_values": {}},
        "InputObserver.__call__": {"model": Model()},
        "InputObserver.remove_inputs": {"input_names": ["pixel_values"]},
        "InputObserver.select": {"predicate": lambda args, kwargs: True},
        "InputObserver.write_records": {"path": str(files["records"]) + ".copy"},
        "InputObserver.check_discrepancies": {"onnx_model": files["onnx"]},
        "ShapeEngine.set_parameters": {"signature_json": '[{"name": "x"}]'},
        "ShapeEngine.value_if_missing": {"key": "x", "value_json": "null"},
        "ShapeEngine.add_call": {"call_json": '{"args": [], "kwargs": []}'},
        "ShapeEngine.remove_inputs": {"names": ["pixel_values"]},
        "ShapeEngine.merge": {"later": hookscope.load([files["records"]])},
    }


# (callable, parameter, hostile value) accepted, and what it means there.
ACCEPTED = {
    # None where it is the parameter's default is accepted by rule (default_is_none); here where it is not.
    ("load", "store_n_calls", "None"): "every call", ("infer", "store_n_calls", "None"): "every call",
    ("infer_arguments", "store_n_calls", "None"): "every call",
    ("InputObserver.check_discrepancies", "hist", "None"): "no counts by threshold",
    ("InferredArguments", "call", "None"): "arguments of a call given, not recorded",
    ("infer", "dim_names", "None"): "no names (yobx's default)", ("shapes_options", "dim_names", "None"): "no names",
    # A dict is a mapping where one is wanted.
    **{(f, p, "dict"): "a mapping" for f, p in [
        ("load", "value_if_missing"), ("summarize", "value_if_missing"), ("infer", "value_if_missing"),
        ("infer_arguments", "value_if_missing"), ("InputObserver", "value_if_missing"),
        ("InputCandidate", "default_values"), ("InputObserver.infer_arguments", "index_or_args_or_kwargs"),
        ("InputObserver.needs_backed_size_oblivious", "arguments"),
        ("InputObserver.needs_backed_size_oblivious", "dynamic_shapes"), ("InferredArguments", "value"),
    ]},
    # A str where a file name is wanted is a file name (refused when no such file exists: a sentence naming it).
    ("InputObserver.write_records", "path", "str"): "a file name",
    ("InputObserver.write_records", "path", "bytes"): "a file name (the system's bytes)",
    ("decode_text", "encoded", "str"): "a str is its own text",
    ("ShapeEngine.__init__", "store_n_calls", "None"): "every call is kept",
    ("ShapeEngine.to_summary_json", "function", "str"): "the function's name the summary carries",
    ("ShapeEngine.infer_arguments", "candidate", "None"): "the default: the representative call",
    ("ShapeEngine.infer_dynamic_shapes", "known_dim_names", "None"): "the default: the built-in names",
    ("ShapeEngine.value_if_missing", "key", "str"): "a name, checked against the signature when a call is added",
    ("summarize", "function", "str"): "a function without records: an empty summary (a RecordWarning says so)",
    **{("InputObserver.check_discrepancies", p, k): "a tolerance" for p in ("atol", "rtol") for k in ("float", "huge")},
    ("Opaque", "type_name", "str"): "a type name",
    ("InputObserver.infer_arguments", "index_or_args_or_kwargs", "negative"): "the last stored call (Python's "
                                                                              "and the references' indexing)",
    # InferredArguments.value and to_value(obj) take any value of the record format.
    **{("InferredArguments", "value", k): "any value" for k in HOSTILE},
    **{("to_value", "obj", k): "a value of the record format" for k in HOSTILE if k != "object"},
}

# Words that name a parameter in a sentence, besides its name (each front door names options by its own keywords:
# no command-line flag here).
ALIASES = {
    "obj": ["cannot record"], "paths": ["cannot read", "No such file", "input_ids"],
    "signature_from": ["cannot read", "No such file"], "key": ["a position is"],
}
# Without torch_tensorrt these answer ImportError naming it, once their arguments are checked (documented).
TENSORRT = {"to_torch_tensorrt_inputs", "InputObserver.torch_tensorrt_inputs"}
# Results the observer builds and hands out (InputObserver.phases' bundles): their constructors are not an API.
RESULTS = {"Phase"}
PYBIND11 = ("incompatible function arguments", "Unable to cast", "incompatible constructor arguments")


def public_callables():
    out = []
    for module in (hookscope, hookscope.torch):
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, type) and issubclass(obj, BaseException) or name in RESULTS:
                continue
            if isinstance(obj, type) and obj.__module__.startswith("hookscope._engine"):
                for attr, member in vars(obj).items():  # the compiled classes' methods, guarded in Python
                    if hasattr(member, "__hookscope_parameters__"):
                        out.append((f"{name}.{attr}", member))
                continue
            if inspect.isfunction(obj) or isinstance(obj, type):
                out.append((name, obj))
            if obj is InputObserver:
                for attr, member in vars(InputObserver).items():
                    if not attr.startswith("_") or attr == "__call__":
                        if inspect.isfunction(member):
                            out.append((f"InputObserver.{attr}", attr))
    return out


def cases():
    for qualname, target in public_callables():
        if hasattr(target, "__hookscope_parameters__"):
            for parameter in target.__hookscope_parameters__:
                for label in HOSTILE:
                    yield pytest.param(qualname, parameter, label, id=f"{qualname}-{parameter}-{label}")
            continue
        if isinstance(target, str):
            fn = getattr(InputObserver, target)
            parameters = list(inspect.signature(fn).parameters.values())[1:]
        else:
            parameters = list(inspect.signature(target).parameters.values())
            if isinstance(target, type):
                parameters = [p for p in parameters if p.name != "self"]
        for p in parameters:
            if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                continue
            for label in HOSTILE:
                yield pytest.param(qualname, p.name, label, id=f"{qualname}-{p.name}-{label}")


def engine_for(qualname, files):
    """A ShapeEngine in the state the method needs: fresh for the signature, recording for calls, else loaded."""
    if qualname in ("ShapeEngine.set_parameters",):
        return hookscope.ShapeEngine()
    if qualname in ("ShapeEngine.value_if_missing", "ShapeEngine.add_call", "ShapeEngine.begin_recording"):
        engine = hookscope.ShapeEngine()
        engine.set_parameters('[{"name": "x"}]')
        if qualname == "ShapeEngine.add_call":
            engine.begin_recording()
        return engine
    if qualname == "ShapeEngine.to_summary_json":
        return hookscope.load([files["records"]], store_n_calls=None)
    return hookscope.load([files["records"]])


def call(qualname, files, parameter, value):
    kwargs = dict(valid(files).get(qualname, {}))
    kwargs[parameter] = value
    if qualname == "ShapeEngine.__init__":
        return hookscope.ShapeEngine(**kwargs)
    if qualname.startswith("ShapeEngine."):
        return getattr(engine_for(qualname, files), qualname.split(".", 1)[1])(**kwargs)
    if qualname.startswith("DynamicShapes."):
        return getattr(hookscope.infer([files["records"]]), qualname.split(".", 1)[1])(**kwargs)
    if qualname.startswith("InputObserver."):
        method = qualname.split(".", 1)[1]
        obs = observed()
        if method == "__call__":
            with obs(**kwargs):
                pass
            return None
        return getattr(obs, method)(**kwargs)
    module = hookscope.torch if qualname in hookscope.torch.__all__ else hookscope
    return getattr(module, qualname)(**kwargs)


@pytest.mark.parametrize("qualname, parameter, label", list(cases()))
def test_hostile_argument(files, qualname, parameter, label, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # a str or bytes value may be taken as a file name: none exists here
    value = HOSTILE[label]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            call(qualname, files, parameter, value)
        except (TypeError, ValueError, FileNotFoundError) as e:
            text = str(e)
            assert not any(p in text for p in PYBIND11), text
            assert text.startswith("hookscope:"), f"{type(e).__name__}: {text}"
            names = [parameter, *ALIASES.get(parameter, [])]
            if isinstance(value, str):
                names.append(value)  # the sentence quotes the value given (a file or a function of that name)
            assert any(n in text for n in names), f"{text!r} does not name {parameter}"
            return
        except ImportError as e:
            assert qualname in TENSORRT and "torch_tensorrt" in str(e), str(e)
        except Exception as e:  # noqa: BLE001 - the table says which type
            pytest.fail(f"{qualname}({parameter}={value!r}): {type(e).__name__}: {e}")
    if value is None and default_is_none(qualname, parameter):
        return
    assert (qualname, parameter, label) in ACCEPTED, f"{qualname}({parameter}={value!r}) was accepted silently"


def default_is_none(qualname, parameter):
    """Whether None is the parameter's default (then passing it is passing the default)."""
    owner, _, attr = qualname.partition(".")
    target = getattr(hookscope.torch, owner, None) or getattr(hookscope, owner)
    fn = getattr(target, attr) if attr else target
    if hasattr(fn, "__hookscope_parameters__"):  # a compiled method: its docstring gives the defaults
        return f"{parameter}: " in fn.__doc__ and f"= None" in fn.__doc__.split(f"{parameter}: ", 1)[1].split(",")[0]
    p = inspect.signature(fn).parameters.get(parameter)
    return p is not None and p.default is None


def test_required_parameters_have_a_valid_value(files):
    """A new public callable with a required parameter needs an entry in valid(): the table cannot call it else."""
    table = valid(files)
    for qualname, target in public_callables():
        if hasattr(target, "__hookscope_parameters__"):
            continue  # keyword-only with defaults, or listed in valid()
        fn = getattr(InputObserver, target) if isinstance(target, str) else target
        required = [p.name for p in inspect.signature(fn).parameters.values()
                    if p.default is inspect.Parameter.empty and p.name != "self"
                    and p.kind not in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)]
        assert set(required) <= set(table.get(qualname, {})), (qualname, required)


def test_engine_classes_are_in_the_table():
    """The compiled engine's classes (ShapeEngine, DynamicShapes) are public: their methods are guarded and listed."""
    listed = {q for q, _ in public_callables()}
    assert {"ShapeEngine.__init__", "ShapeEngine.add_call", "ShapeEngine.infer_dynamic_shapes",
            "ShapeEngine.infer_arguments", "ShapeEngine.merge", "DynamicShapes.to_json"} <= listed
