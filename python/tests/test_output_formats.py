"""hookscope.output_formats() and DynamicShapes.write / warnings_for: the library's table of output formats, the one
the command's --format reads; each name writes what its DynamicShapes method writes."""
import subprocess

import pytest

import hookscope
from helpers import DATA
from test_front_doors import cli

DIRECT = {"torch": "to_json", "trtexec": "to_trtexec", "ort": "to_ort_options", "torch-tensorrt": "to_torch_tensorrt",
          "onnx": "to_onnx", "report": "report"}


@pytest.fixture(scope="module")
def ds():
    return hookscope.infer([DATA / "llm.jsonl"], store_n_calls="all", profiles="auto", dim_names=True)


def test_output_formats_lists_every_format_the_default_first():
    formats = hookscope.output_formats()
    assert [name for name, _ in formats] == list(DIRECT)
    assert all(isinstance(d, str) and d for _, d in formats)


def test_output_formats_are_the_commands_formats():
    usage = subprocess.run([cli(), "--help"], capture_output=True, text=True, check=True).stdout
    assert f"[--format {'|'.join(name for name, _ in hookscope.output_formats())}]" in usage
    for name, description in hookscope.output_formats():
        assert f"{name}  " in usage and description in usage


@pytest.mark.parametrize("name", list(DIRECT))
def test_write_is_the_formats_writer(ds, name):
    assert ds.write(name) == getattr(ds, DIRECT[name])()


def test_write_torch_typed_is_the_typed_json(ds):
    assert ds.write("torch", typed=True) == ds.to_typed_json()
    assert ds.write() == ds.to_json()


def test_write_unasked_writes_the_tables_first_format(ds):
    """The default is the library's (default_output_format), as the command's without --format."""
    assert ds.write() == ds.write(hookscope.output_formats()[0][0])
    assert ds.write(typed=True) == ds.write(hookscope.output_formats()[0][0], typed=True)


def test_warnings_for(ds):
    for name in ("torch", "trtexec", "ort", "onnx"):
        assert ds.warnings_for(name) == ds.warnings
    assert ds.warnings_for("torch-tensorrt") == list(ds.torch_tensorrt_warnings) + list(ds.warnings)
    assert ds.warnings_for("report") == []


@pytest.mark.parametrize("call,message", [
    (lambda ds: ds.write("xml"), "hookscope: format: expected torch, trtexec, ort, torch-tensorrt, onnx or report, "
                                 "got 'xml'"),
    (lambda ds: ds.warnings_for("Torch"), "hookscope: format: expected torch, trtexec, ort, torch-tensorrt, onnx or "
                                          "report, got 'Torch'"),
    (lambda ds: ds.write("trtexec", typed=True),
     "hookscope: typed: the format 'trtexec' has no typed form (torch has)"),
], ids=["unknown name", "names are case-sensitive", "no typed form"])
def test_write_refuses_what_the_table_does_not_hold(ds, call, message):
    with pytest.raises(hookscope.LoadError) as caught:
        call(ds)
    assert str(caught.value) == message
    assert caught.value.kind == "bad_option"
