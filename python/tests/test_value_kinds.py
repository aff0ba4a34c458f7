"""The record format's kinds that C++ captures write (bytes, opaque leaves, variants, text that is not UTF-8) as
Python reads them: hookscope.decode_text, hookscope.Opaque, and InputObserver's rebuilding of arguments."""
import base64
import math
import json

import pytest

import hookscope


@pytest.mark.parametrize("raw", [b"", b"plain", "é😀".encode(), b"a\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\x00\x01"])
def test_decode_text_gives_back_the_bytes(raw):
    try:
        encoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        encoded = {"base64": base64.b64encode(raw).decode()}
    assert hookscope.decode_text(encoded).encode("utf-8", "surrogateescape") == raw


@pytest.mark.parametrize("bad", [3, None, {"base64": "Y"}, {"hex": "00"}, {"base64": "AA==", "x": 1}])
def test_decode_text_refuses_what_is_not_text(bad):
    with pytest.raises((hookscope.FormatError, ValueError)):
        hookscope.decode_text(bad)


def test_opaque_leaf_with_address_and_markers_read_back():
    # What the C++ capture writes for a raw pointer (by address), a pointee it could not read, and a value too large.
    leaves = [{"opaque": "const float*", "address": "0x7f3a2c001000"},
              {"opaque": "const char*", "address": "0xffffffffffffffff", "unreadable": True},
              {"opaque": "std::vector<float>", "length": 2500000, "too_large": True}]
    assert [hookscope.Opaque.from_json(leaf) for leaf in leaves] == [
        hookscope.Opaque("const float*", address=0x7f3a2c001000),
        hookscope.Opaque("const char*", address=2**64 - 1, unreadable=True),
        hookscope.Opaque("std::vector<float>", length=2500000, too_large=True)]
    assert repr(hookscope.Opaque.from_json(leaves[1])) == \
        "hookscope.Opaque('const char*', address=0xffffffffffffffff, unreadable=True)"
    assert hookscope.Opaque("T*", address=1) != hookscope.Opaque("T*", address=2)
    with pytest.raises(ValueError, match="^hookscope: address: expected an int from 0 to 18446744073709551615"):
        hookscope.Opaque("T*", address=2**64)


def test_opaque_equality_and_repr():
    assert hookscope.Opaque("std::mutex") == hookscope.Opaque("std::mutex")
    assert hookscope.Opaque("node") != hookscope.Opaque("node", depth_limited=True)
    assert len({hookscope.Opaque("a"), hookscope.Opaque("a")}) == 1
    assert repr(hookscope.Opaque("node", True)) == "hookscope.Opaque('node', depth_limited=True)"


def test_records_of_cpp_kinds_infer_and_give_their_arguments(tmp_path):
    # Written by hand as the C++ writers write them (docs/record_format.md).
    lines = [
        {"function": "f", "signature": [{"name": "x"}, {"name": "tag"}],
         "args": [], "kwargs": [["x", {"variant": 0, "value": {"shape": [n, 3], "dtype": "float32"}}],
                                ["tag", {"dict": [[{"base64": "/w=="}, {"bytes": "AAE="}],
                                                  ["h", {"opaque": "handle*"}]]}]]}
        for n in (1, 2, 5)
    ]
    for line in lines[1:]:
        del line["signature"]
    path = tmp_path / "kinds.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    ds = hookscope.infer([path])
    # Containers are kept (only scalar keyword arguments of C++ records are dropped: rule A3).
    assert hookscope.infer_arguments([path]).value == {"dict": [["x", lines[0]["kwargs"][0][1]],
                                                                ["tag", lines[0]["kwargs"][1][1]]]}
    # The dict key b"\xff" has no spelling as a JSON object's key: the plain form refuses with a sentence, the typed
    # form writes it as {"base64": ...}.
    with pytest.raises(hookscope.InferenceError, match="a dict key is not UTF-8"):
        ds.to_json()
    typed = json.loads(ds.to_typed_json())
    assert typed == {"dict": [["x", {"0": "DYNAMIC"}],
                              ["tag", {"dict": [[{"base64": "/w=="}, None], ["h", None]]}]]}


torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")


class TakesBytes(torch.nn.Module):
    def forward(self, x, payload):
        return x * len(payload)


def test_bytes_arguments_are_observed_and_rebuilt():
    from hookscope.torch import InputObserver
    m = TakesBytes()
    obs = InputObserver()
    with obs(m):
        for n in (1, 2, 3):
            m(torch.ones((n, 4)), b"\x00\xff")
    args = obs.infer_arguments()  # positional calls: a tuple
    assert args[1] == b"\x00\xff"
    assert args[0].shape == (1, 4)


def test_rebuilding_the_cpp_kinds():
    from hookscope.torch import InputObserver
    obs = InputObserver()
    rebuild = obs._rebuild
    assert rebuild({"bytes": "AAE="}, None) == b"\x00\x01"
    assert rebuild({"opaque": "handle*"}, None) == hookscope.Opaque("handle*")
    assert rebuild({"opaque": "node", "depth_limited": True}, None) == hookscope.Opaque("node", True)
    assert rebuild({"variant": 1, "value": {"int": 3}}, None) == 3
    assert rebuild({"str": {"base64": "Yf8="}}, None).encode("utf-8", "surrogateescape") == b"a\xff"
    assert rebuild({"dict": [[{"base64": "/w=="}, {"int": 1}]]}, None) == {"\udcff": 1}


def test_decoding_a_call_keeps_the_observed_objects_by_position_and_by_name():
    # infer_arguments' (args, kwargs) encoding, decoded in _codec: a positional argument of the observed call also
    # stands for its parameter given by keyword; the engine's placeholders become new objects.
    from hookscope.torch._codec import decode_call
    x, mask = torch.ones(2, 3), torch.zeros(2, 5)
    encoded = {"tuple": [{"tuple": [{"shape": [2, 3], "dtype": "float32"}]},
                         {"dict": [["mask", {"shape": [2, 5], "dtype": "float32"}], ["n", {"int": 4}],
                                   ["cache", {"shape": [2, 0], "dtype": "float32"}]]}]}
    args, kwargs = decode_call(encoded, [x], {}, ["x", "mask"], {})
    assert args[0] is x and kwargs["n"] == 4 and kwargs["cache"].shape == (2, 0)
    args, kwargs = decode_call(encoded, [x, mask], {}, ["x", "mask"], {})
    assert kwargs["mask"] is mask
    assert decode_call({"tuple": [{"tuple": []}, {"dict": []}]}, [], {}, [], {}) == ((), {})


@pytest.mark.parametrize("spelled, expected", [("nan", math.nan), ("inf", math.inf), ("-inf", -math.inf)])
def test_rebuilding_a_non_finite_float_gives_a_float(spelled, expected):
    # The record format writes NaN and the infinities as strings ({"float": "nan"}); Python's value is the float.
    from hookscope.torch import InputObserver
    got = InputObserver()._rebuild({"float": spelled}, None)
    assert isinstance(got, float), f"{{'float': {spelled!r}}} rebuilt as {got!r}"
    assert got == expected or (math.isnan(expected) and math.isnan(got))


class TakesAnything(torch.nn.Module):
    def forward(self, x, extra):
        return x


@pytest.mark.parametrize("extra", [math.nan, math.inf, -math.inf, -0.0, 5e-324, 1.7976931348623157e308],
                         ids=["nan", "inf", "-inf", "-0.0", "subnormal", "max"])
def test_observing_a_float_argument_of_any_value(extra):
    from hookscope.torch import InputObserver
    m = TakesAnything()
    obs = InputObserver()
    with obs(m):
        for n in (1, 2, 3):
            m(x=torch.ones((n, 4)), extra=(torch.ones(n), extra))  # in a container: a scalar keyword is dropped (A3)
    got = obs.infer_arguments()["extra"][1]
    assert math.copysign(1.0, got) == math.copysign(1.0, extra)
    assert got == extra or (math.isnan(extra) and math.isnan(got))


@pytest.mark.parametrize("raw", [b"a\xff", b"\xed\xa0\x80", b"\x00\x80"])
def test_observing_a_str_that_decode_text_gave(raw):
    # decode_text gives C++ text that is not UTF-8 as a str of surrogate escapes; observing that str again must
    # not break the engine's JSON (a lone surrogate escape is not JSON text for Boost.JSON).
    from hookscope.torch import InputObserver
    text = hookscope.decode_text({"base64": base64.b64encode(raw).decode()})
    m = TakesAnything()
    obs = InputObserver()
    with obs(m):
        for n in (1, 2, 3):
            m(x=torch.ones((n, 4)), extra=(torch.ones(n), text))
    assert obs.infer_arguments()["extra"][1] == text


def test_records_of_every_cpp_kind_read_back_through_python(tmp_path):
    # What the C++ writers write (by hand here, docs/record_format.md), read by hookscope.read_records: the same
    # JSON values, strict JSON (no NaN literal), floats exact.
    values = [{"bytes": "AP8="}, {"opaque": {"base64": "/w=="}, "depth_limited": True}, {"float": -0.0},
              {"float": 5e-324}, {"float": "nan"}, {"variant": 9223372036854775807, "value": {"float": 0.1}},
              {"str": "a\u0000b\U0001F600"}, {"dict": [[{"base64": "7aCA"}, None]]}]
    line = {"function": "f", "signature": [{"name": "a", "default": {"tuple": values}}],
            "args": [{"tuple": values}], "kwargs": [["k", {"list": values}]], "result": {"tuple": values}}
    path = tmp_path / "kinds.jsonl"
    path.write_text(json.dumps(line, allow_nan=False) + "\n")
    [record] = hookscope.read_records([path])
    assert record == line
    assert math.copysign(1.0, record["args"][0]["tuple"][2]["float"]) == -1.0


@pytest.mark.parametrize("bad", [{"base64": 5}, {"base64": None}, {"base64": ["AA=="]}, {"base64": "é"},
                                 {"base64": "AA= ="}, {"base64": "AAA"}],
                         ids=["int", "null", "list", "non-ASCII", "space", "unpadded"])
def test_decode_text_refuses_bad_base64_with_a_hookscope_sentence(bad):
    # Every error a "hookscope: ..." sentence naming what was wrong: here TypeError and binascii.Error escape with
    # base64's own words ("Incorrect padding", "argument should be a bytes-like object ...").
    with pytest.raises(hookscope.FormatError, match="^hookscope: "):
        hookscope.decode_text(bad)
