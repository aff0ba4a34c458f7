"""InputObserver.check_discrepancies: ONNX Runtime runs every stored call through a real
torch.onnx.export(dynamo=True) model, given as a file name (str and pathlib.Path), an onnx.ModelProto, a
torch.onnx.ONNXProgram, its onnx_ir model, or an object holding one (yobx's to_onnx result); one row per stored call with the references' keys; a wrong model gives SUCCESS False with an
error instead of raising."""
import builtins
import math

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")
onnx = pytest.importorskip("onnx", reason="onnx is installed by tools/python_env.sh")
pytest.importorskip("onnxruntime", reason="onnxruntime is installed by tools/python_env.sh")
pytest.importorskip("onnxscript", reason="onnxscript is installed by tools/python_env.sh")

from torch.export import Dim  # noqa: E402

from hookscope.torch import InputObserver  # noqa: E402

# The keys of onnx-diagnostic 0.9.3's rows (hist=(0.1, 0.01), include_io=True).
REFERENCE_KEYS = {"abs", "rel", "sum", "n", "dnan", ">0.1", ">0.01", "SUCCESS", "index", "duration_torch",
                  "ort_duration", "n_inputs", "n_none", "n_empty", "inputs", "outputs_torch", "outputs_ort"}


class Small(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)

    def forward(self, x, y):
        return self.linear(x).relu() + y.sum(dim=-1, keepdim=True), x.mean(dim=-1)


class Other(torch.nn.Module):
    """Another model taking the same inputs: its outputs differ from Small's."""

    def forward(self, x, y):
        return x[..., :3] * 2 + y.sum(dim=-1, keepdim=True), x.mean(dim=-1)


class Decoder(torch.nn.Module):
    """A decoder with an optional input: pixel_values at the first step only."""

    def forward(self, input_ids, pixel_values=None):
        h = input_ids.float().unsqueeze(-1).expand(-1, -1, 4)
        if pixel_values is not None:
            h = h + pixel_values.mean()
        return h.sum(dim=-1)


def observed_small():
    m = Small().eval()
    obs = InputObserver()
    with obs(m):
        for b in (2, 3, 5):
            m(torch.randn(b, 4), torch.randn(b, 2))
    return m, obs


def export(model, obs, path):
    program = torch.onnx.export(model, obs.infer_arguments(), dynamic_shapes=obs.infer_dynamic_shapes(), dynamo=True)
    program.save(str(path))
    return program


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    m, obs = observed_small()
    path = tmp_path_factory.mktemp("onnx") / "small.onnx"
    return obs, export(m, obs, path), path


class ExportArtifactLike:
    """What yobx's to_onnx returns (yobx.container.ExportArtifact), by its attributes: proto, get_proto(), container,
    report, filename, builder, function; the class is not yobx's, so the model is found by what it offers."""

    def __init__(self, proto, filename=None):
        self.proto, self.container, self.report, self.filename = proto, None, None, filename
        self.builder = self.function = None

    def get_proto(self, include_weights=True):
        return self.proto


class Holder:
    """An exporter's result holding its model under one attribute."""

    def __init__(self, **attributes):
        vars(self).update(attributes)


MODEL_KINDS = {
    "str": lambda program, path: str(path),
    "path": lambda program, path: path,
    "model_proto": lambda program, path: onnx.load(str(path)),
    "onnx_program": lambda program, path: program,
    "onnx_ir_model": lambda program, path: program.model,
    "yobx_artifact": lambda program, path: ExportArtifactLike(onnx.load(str(path)), filename="not a model"),
    "proto_only": lambda program, path: Holder(proto=onnx.load(str(path))),
    "model_proto_attribute": lambda program, path: Holder(model_proto=onnx.load(str(path))),
    "model_attribute_ir": lambda program, path: Holder(model=program.model),
    "nested_result": lambda program, path: Holder(model=Holder(proto=onnx.load(str(path)))),
}


@pytest.mark.parametrize("kind", sorted(MODEL_KINDS))
def test_check_discrepancies_each_input_kind(small, kind):
    obs, program, path = small
    model = MODEL_KINDS[kind](program, path)
    rows = obs.check_discrepancies(model)
    assert len(rows) == obs.num_obs == 3
    for i, row in enumerate(rows):
        assert REFERENCE_KEYS <= set(row), set(row) ^ REFERENCE_KEYS
        assert "error" not in row
        assert row["SUCCESS"] is True
        assert row["index"] == i
        assert row["n_inputs"] == 2 and row["n_none"] == 0 and row["n_empty"] == 0
        assert 0 <= row["abs"] < 1e-4 and 0 <= row["rel"] < 0.1
        assert row["duration_torch"] > 0 and row["ort_duration"] > 0
    assert [r["inputs"] for r in rows] == [f"dict(x:Tfloat32s{b}x4,y:Tfloat32s{b}x2)" for b in (2, 3, 5)]


def test_check_discrepancies_a_wrong_model_gives_success_false(small, tmp_path):
    obs, _, _ = small
    m2, obs2 = observed_small()
    wrong = tmp_path / "other.onnx"
    export(Other().eval(), obs2, wrong)
    rows = obs.check_discrepancies(wrong, hist=(0.1, 0.01, 1e-6))
    assert [r["SUCCESS"] for r in rows] == [False] * 3
    for row in rows:
        assert row["abs"] > 1e-4 and math.isfinite(row["abs"])
        assert row[">1e-06"] >= row[">0.01"] >= row[">0.1"] >= 1


def test_check_discrepancies_reports_errors_in_the_row(small, tmp_path):
    """ONNX Runtime refusing the inputs, or outputs of another count: an `error` field, SUCCESS False, no exception."""
    obs, _, _ = small

    class Narrow(torch.nn.Module):  # x of width 4 in the observer, 5 here: ONNX Runtime refuses the feeds
        def forward(self, x, y):
            return x.sum(dim=-1, keepdim=True) + y, x.mean(dim=-1)

    program = torch.onnx.export(Narrow().eval(), (torch.randn(2, 5), torch.randn(2, 2)), dynamic_shapes=(
        {0: Dim.DYNAMIC}, {0: Dim.DYNAMIC}), dynamo=True)
    rows = obs.check_discrepancies(program)
    assert all(r["SUCCESS"] is False and r["error"] for r in rows)

    class One(torch.nn.Module):
        def forward(self, x, y):
            return x.sum(dim=-1, keepdim=True) + y

    program = torch.onnx.export(One().eval(), (torch.randn(2, 4), torch.randn(2, 2)), dynamic_shapes=(
        {0: Dim.DYNAMIC}, {0: Dim.DYNAMIC}), dynamo=True)
    rows = obs.check_discrepancies(program, include_io=False)
    assert all(r["SUCCESS"] is False and "number of outputs" in r["error"] for r in rows)
    assert all("inputs" not in r for r in rows)


def test_check_discrepancies_decoder_with_an_optional_input(tmp_path):
    m = Decoder().eval()
    obs = InputObserver(value_if_missing={"pixel_values": torch.empty((0, 3, 4, 4))})
    with obs(m):
        m(torch.randint(0, 9, (2, 5)), pixel_values=torch.randn(2, 3, 4, 4))
        m(torch.randint(0, 9, (2, 1)))
        m(torch.randint(0, 9, (2, 1)))
    kwargs, ds = obs.infer_arguments(), obs.infer_dynamic_shapes()
    program = torch.onnx.export(m, (), kwargs=kwargs, dynamic_shapes=ds, dynamo=True)
    rows = obs.check_discrepancies(program)
    assert len(rows) == 3
    assert [r["n_inputs"] for r in rows] == [2, 2, 2]
    # The decode steps left pixel_values out: the placeholder is empty; the values agree where the model is the same.
    assert rows[0]["n_empty"] == 0 and rows[1]["n_empty"] == rows[2]["n_empty"] == 1
    assert all(r["SUCCESS"] for r in rows), rows


def test_check_discrepancies_progress_bar_without_tqdm(small, monkeypatch):
    obs, program, _ = small
    real_import = builtins.__import__

    def no_tqdm(name, *args, **kwargs):
        if name == "tqdm" or name.startswith("tqdm."):
            raise ImportError("No module named 'tqdm'")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_tqdm)
    assert [r["SUCCESS"] for r in obs.check_discrepancies(program, progress_bar=True)] == [True] * 3


def test_check_discrepancies_initializer_makes_the_session(small):
    """torch.onnx's parameter: initializer(model) returns the session."""
    import onnxruntime

    obs, program, path = small
    seen = []

    def initializer(model):
        seen.append(type(model))
        return onnxruntime.InferenceSession(model, providers=["CPUExecutionProvider"])

    assert all(r["SUCCESS"] for r in obs.check_discrepancies(path, initializer=initializer))
    assert seen == [str]


@pytest.mark.parametrize("kwargs, error, words", [
    ({"onnx_model": 3}, TypeError, "onnx_model"),
    ({"onnx_model": b"model"}, TypeError, "onnx_model"),
    ({"onnx_model": "/nonexistent/model.onnx"}, FileNotFoundError, "onnx_model"),
    ({"atol": -1.0}, ValueError, "atol"),
    ({"atol": float("nan")}, ValueError, "atol"),
    ({"rtol": "0.1"}, TypeError, "rtol"),
    ({"hist": "0.1"}, TypeError, "hist"),
    ({"hist": (0.1, float("inf"))}, ValueError, "hist"),
    ({"progress_bar": "yes"}, TypeError, "progress_bar"),
    ({"include_io": None}, TypeError, "include_io"),
    ({"skip_none": 2}, TypeError, "skip_none"),
    ({"initializer": "onnxruntime"}, TypeError, "initializer"),
])
def test_check_discrepancies_bad_arguments(small, kwargs, error, words):
    obs, _, path = small
    kwargs = {"onnx_model": path, **kwargs}
    with pytest.raises(error, match=f"^hookscope: .*{words}"):
        obs.check_discrepancies(**kwargs)


@pytest.mark.parametrize("kind", ["graph_proto", "function_proto", "text_holder", "empty_holder", "module", "int"])
def test_check_discrepancies_refuses_what_holds_no_model_naming_the_accepted_forms(small, kind):
    obs, program, path = small
    proto = onnx.load(str(path))
    model = {"graph_proto": proto.graph, "function_proto": onnx.FunctionProto(),
             "text_holder": Holder(proto=str(path), model="model.onnx"), "empty_holder": Holder(proto=None),
             "module": Small(), "int": 7}[kind]
    with pytest.raises(TypeError) as refused:
        obs.check_discrepancies(model)
    text = str(refused.value)
    assert text.startswith("hookscope: check_discrepancies: onnx_model: expected an ONNX file name"), text
    for form in ("onnx.ModelProto", "ONNX IR model", ".model_proto", ".get_proto()", ".proto", ".model",
                 "torch.onnx.ONNXProgram", "yobx's to_onnx result"):
        assert form in text, (form, text)
    assert text.endswith(f"got {type(model).__name__}")


def test_check_discrepancies_without_captured_inputs(small):
    _, _, path = small
    with pytest.raises(RuntimeError, match=r"^hookscope: No inputs were captured\."):
        InputObserver().check_discrepancies(path)
