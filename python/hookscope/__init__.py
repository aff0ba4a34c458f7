"""hookscope: dynamic shapes for torch.export, TensorRT and ONNX Runtime from recorded calls.

The compiled shape engine (``hookscope._engine``, the C++ library) reads the sources and infers; this package
spells its options as Python keywords (one per ``hookscope-shapes`` option) and, in ``hookscope.torch``, observes a
``torch.nn.Module``. Record files (``HOOKSCOPE_RECORD``, ``call_recorder``, any producer of docs/record_format.md)
and summaries (``summarize``) are read wherever the command reads them, with the same answers and the same errors.

    >>> import hookscope
    >>> hookscope.infer(["forward.jsonl"], dim_names=True).to_json()  # what `hookscope-shapes infer` prints
"""
from __future__ import annotations

import json
import os
import warnings as _warnings
from collections.abc import Collection
from typing import Any, Iterable, Mapping, Union

from . import _arguments, _engine, _errors
from ._arguments import ArgumentTypeError, ArgumentValueError
from ._engine import (DynamicShapes, FormatError, InferenceError, LoadError, RecordError, ShapeEngine,
                      ValueKindError, output_formats)

# The compiled classes' methods refuse with hookscope's sentences (their binding's own would be pybind11's); an
# argument's text that is no valid encoding (FormatError) is refused naming the method and the arguments given.
_arguments.guard_binding(ShapeEngine, (FormatError,))
_arguments.guard_binding(DynamicShapes, (FormatError,))

__all__ = [
    "FormatError",
    "RecordError",
    "InferenceError",
    "LoadError",
    "ValueKindError",
    "ArgumentTypeError",
    "ArgumentValueError",
    "RecordWarning",
    "ShapeEngine",
    "DynamicShapes",
    "output_formats",
    "InferredArguments",
    "read_records",
    "load",
    "infer",
    "infer_arguments",
    "summarize",
    "merge_summaries",
    "shapes_options",
    "Opaque",
    "decode_text",
]

PathLike = Union[str, "os.PathLike[str]"]
Paths = Union[PathLike, Iterable[PathLike]]
Key = Union[str, int]


class Opaque:
    """A C++ argument recorded without its value (an opaque leaf of the record format: ``{"opaque": "std::mutex"}``):
    its type's name, and what the leaf says beside it: ``depth_limited`` where a recursive value was cut at the
    capture's depth bound, ``address`` (an int) for a raw pointer recorded by its address, ``unreadable`` where the
    pointee was asked for and could not be read, ``too_large`` (with ``length``, the element or byte count, when
    known) for a value too large to record."""

    __slots__ = ("type_name", "depth_limited", "address", "unreadable", "length", "too_large")

    def __init__(self, type_name: str, depth_limited: bool = False, address: int | None = None,
                 unreadable: bool = False, length: int | None = None, too_large: bool = False):
        self.type_name = _arguments.text("type_name", type_name)
        self.depth_limited = _arguments.flag("depth_limited", depth_limited)
        self.address = None if address is None else _arguments.count("address", address, maximum=2**64 - 1)
        self.unreadable = _arguments.flag("unreadable", unreadable)
        self.length = None if length is None else _arguments.count("length", length)
        self.too_large = _arguments.flag("too_large", too_large)

    @classmethod
    def from_json(cls, leaf: Mapping[str, Any]) -> "Opaque":
        """The leaf of its record-format object (``{"opaque": ..., "address": "0x...", ...}``)."""
        address = leaf.get("address")
        return cls(decode_text(leaf["opaque"]), leaf.get("depth_limited", False),
                   None if address is None else int(address, 16), leaf.get("unreadable", False), leaf.get("length"),
                   leaf.get("too_large", False))

    def _key(self) -> tuple:
        return (self.type_name, self.depth_limited, self.address, self.unreadable, self.length, self.too_large)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Opaque) and other._key() == self._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        parts = [repr(self.type_name)]
        if self.depth_limited:
            parts.append("depth_limited=True")
        if self.address is not None:
            parts.append(f"address={self.address:#x}")
        if self.unreadable:
            parts.append("unreadable=True")
        if self.length is not None:
            parts.append(f"length={self.length}")
        if self.too_large:
            parts.append("too_large=True")
        return f"hookscope.Opaque({', '.join(parts)})"


def decode_text(encoded: Any) -> str:
    """A string of the record format: a JSON string, or ``{"base64": ...}`` for C++ bytes that are not UTF-8, which
    comes back as a ``str`` holding those bytes as surrogate escapes (``s.encode("utf-8", "surrogateescape")`` gives
    the bytes back)."""
    if isinstance(encoded, str):
        return encoded
    if isinstance(encoded, dict) and set(encoded) == {"base64"} and isinstance(encoded["base64"], str):
        import base64
        import binascii
        try:
            return base64.b64decode(encoded["base64"], validate=True).decode("utf-8", "surrogateescape")
        except (binascii.Error, ValueError) as e:
            raise FormatError(f"hookscope: {{\"base64\": {encoded['base64']!r}}}: not base64 ({e})") from None
    raise FormatError(f"hookscope: encoded: expected a string or {{\"base64\": ...}}, found {encoded!r}")


class RecordWarning(UserWarning):
    """What the readers accepted with a doubt (a last line cut short, ...) or left out (a line longer than the record
    format's limit, calls beyond ``store_n_calls``, records a writer dropped and counted in a note): the warnings
    ``hookscope-shapes`` prints on standard error. One that names an option names it by this front door's keyword
    and carries its sentence as ``pieces``, as a refusal does (empty when it names none)."""

    def __init__(self, message: str, pieces: list | None = None):
        super().__init__(message)
        self.pieces = pieces or []


class _Default(int):
    """The default ``store_n_calls`` (3), told apart from an explicit 3: summaries hold every call and refuse an
    explicit limit, as ``hookscope-shapes --store-n-calls 3`` does with summaries."""

    def __repr__(self) -> str:
        return "3"


_STORE_N_CALLS_DEFAULT = _Default(3)


def _paths(paths: Paths) -> list[bytes]:
    """File names as the system spells them (os.fsencode: a name that is not UTF-8 stays readable)."""
    if isinstance(paths, (str, bytes, os.PathLike)):
        return [os.fsencode(paths)]
    if isinstance(paths, Mapping) or not isinstance(paths, Iterable):
        raise TypeError(f"hookscope: paths: expected a path or an iterable of paths, got {type(paths).__name__} "
                        f"{paths!r}")
    return [os.fsencode(_arguments.path("paths", p))
            for p in _arguments.items("paths", paths, "a path or an iterable of paths")]


def _engine_call(fn, *args, **kwargs):
    """A call into the compiled front door; a refusal that names options names them by this front door's keywords."""
    try:
        return fn(*args, **kwargs)
    except LoadError as e:
        if not getattr(e, "pieces", None):
            raise
        raise _errors.spelled(e, _errors.FRONT_DOOR_KEYWORDS) from None


def _bad_option(option: str, rest: str) -> LoadError:
    """A refusal of the option the library names ``option`` (LoadError of kind bad_option, the command's usage error),
    spelled as this front door spells its keywords: ``<keyword><rest>``."""
    error = LoadError(f"{option}{rest}")
    error.kind, error.options, error.pieces = "bad_option", (option,), [("", option), (rest, None)]
    return _errors.spelled(error, _errors.FRONT_DOOR_KEYWORDS)


def _value_json(key: Any, v: Any) -> str:
    if isinstance(v, str):
        return v
    try:
        return json.dumps(v, allow_nan=False)
    except (TypeError, ValueError) as e:
        raise _bad_option("values_if_missing", f" {key}: not a value of the record encoding ({e})") from None


def _count(option: str, n: Any) -> int:
    """A count for the option the library names ``option``: an int, read by the library as the command line's
    digits are."""
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"hookscope: {_errors.FRONT_DOOR_KEYWORDS.get(option, option)}: expected an int, got {n!r}")
    return _engine_call(_engine.parse_count, option, str(n))


def _store_n_calls(n: Any) -> int | None:
    """The engine's spelling: None when not given, UNLIMITED for every call (None or "all" here)."""
    if n is _STORE_N_CALLS_DEFAULT:
        return None
    if n is not None and n != "all" and (isinstance(n, bool) or not isinstance(n, int)):
        raise TypeError(f"hookscope: store_n_calls: expected a positive int, None or 'all', got {n!r}")
    n = _engine_call(_engine.parse_store_n_calls, "all" if n is None else str(n))
    _engine_call(_engine.check_store_n_calls, n)
    return n


def _names(option: str, keys: Any) -> list[str]:
    """Names or positions (a position as the command line writes it, "0"); a str alone is refused: it is not a
    collection of names."""
    if keys is None:
        return []
    if isinstance(keys, (str, bytes, Mapping)) or not isinstance(keys, Collection):
        raise TypeError(f"hookscope: {option}: expected a collection of names or positions, got {keys!r}")
    out = []
    for k in _arguments.items(option, keys, "a collection of names or positions"):
        if isinstance(k, bool) or not isinstance(k, (str, int)):
            raise TypeError(f"hookscope: {option}: a name (str) or a position (int), got {k!r}")
        out.append(_arguments.utf8(option, k) if isinstance(k, str) else str(k))
    return out


def _load(paths: Paths, *, function: str | None = None, store_n_calls: Any = _STORE_N_CALLS_DEFAULT,
          value_if_missing: Mapping[Key, Any] | None = None, signature_from: PathLike | None = None,
          remove_inputs: Collection[str] | None = None, stored_call_option: str = "",
          for_summary: bool = False) -> _engine.LoadedEngine:
    """The one call into the library's front door; the readers' warnings become RecordWarnings as they are met."""
    if value_if_missing is not None and not isinstance(value_if_missing, Mapping):
        raise TypeError(f"hookscope: value_if_missing: expected a mapping of name or position to value, got "
                        f"{type(value_if_missing).__name__}")
    for k in value_if_missing or {}:  # the type here; the range where the command checks it (its sentence)
        if isinstance(k, bool) or not isinstance(k, (str, int)):
            _arguments.key("value_if_missing", k)
    if _arguments.text("function", function, optional=True) is not None:
        _arguments.utf8("function", function)
    _arguments.path("signature_from", signature_from, optional=True)
    loaded = _engine_call(
        _engine.load, _paths(paths), function=function, store_n_calls=_store_n_calls(store_n_calls),
        values_if_missing=[(k, _value_json(k, v)) for k, v in (value_if_missing or {}).items()],
        signature_from=None if signature_from is None else os.fsencode(signature_from),
        remove_inputs=_names("remove_inputs", remove_inputs), stored_call_option=stored_call_option,
        for_summary=for_summary, on_warning=lambda w, pieces: _warnings.warn(RecordWarning(w, pieces), stacklevel=4))
    return loaded


def read_records(paths: Paths, *, with_warnings: bool = False):
    """Every record of the files (read as one stream: a function's signature binds across files), each as a dict
    of the record format (``function``, ``signature``, ``args``, ``kwargs``, ``result``, ``threw``, ``latency_ns``;
    values in the record format's JSON encoding). A bad line raises RecordError("<file>:<line>: ..."), the
    sentence ``hookscope-shapes`` prints. What the reader accepts with a doubt or leaves out (a last line cut short, a
    line longer than the record format's limit, a note of records its writer dropped) is issued as RecordWarning, or
    with ``with_warnings=True`` returned: ``(records, warnings)``. Notes are no records: they are not returned."""
    with_warnings = _arguments.flag("with_warnings", with_warnings)
    lines, warnings, _ = _engine_call(_engine.read_records, _paths(paths))
    records = [json.loads(line) for line in lines]
    if with_warnings:
        return records, list(warnings)
    for warning in warnings:
        _warnings.warn(RecordWarning(warning), stacklevel=2)
    return records


def load(paths: Paths, *, function: str | None = None, store_n_calls: int | str | None = _STORE_N_CALLS_DEFAULT,
         value_if_missing: Mapping[Key, Any] | None = None, signature_from: PathLike | None = None,
         remove_inputs: Collection[str] | None = None) -> ShapeEngine:
    """A ShapeEngine fed with the calls of one function, read from record files or summaries as
    ``hookscope-shapes`` reads them (``store_n_calls=None``: every call, summarised in constant memory)."""
    loaded = _load(paths, function=function, store_n_calls=store_n_calls, value_if_missing=value_if_missing,
                   signature_from=signature_from, remove_inputs=remove_inputs)
    return loaded.engine


def summarize(paths: Paths, *, function: str | None = None, value_if_missing: Mapping[Key, Any] | None = None,
              signature_from: PathLike | None = None) -> str:
    """``hookscope-shapes summarize`` as a function: the summary document (JSON text, docs/summary_format.md) of
    every call of one function in the record files (with ``function`` given, a shard without its calls gives an
    empty summary, which merges as nothing). Summaries of shards merge (``merge_summaries``, or given to ``infer``
    as files) into exactly what one pass over the shards, concatenated in order, gives."""
    loaded = _load(paths, function=function, value_if_missing=value_if_missing, signature_from=signature_from,
                   for_summary=True)
    return loaded.engine.to_summary_json(function=loaded.function)


def merge_summaries(summaries: Iterable[str], *, function: str | None = None) -> ShapeEngine:
    """The engine of the summaries (JSON texts, in the order of their shards) merged: infer from it as from
    ``load(shards, store_n_calls=None)``. Summaries of another function or recorded differently (signature,
    value_if_missing) raise LoadError saying which (``.kind``)."""
    if isinstance(summaries, (str, bytes)):
        raise TypeError("hookscope: merge_summaries: expected an iterable of summary texts, got one text (wrap it "
                        "in a list)")
    if not isinstance(summaries, Iterable) or isinstance(summaries, Mapping):
        raise TypeError(f"hookscope: summaries: expected an iterable of summary texts, got "
                        f"{type(summaries).__name__}")
    if _arguments.text("function", function, optional=True) is not None:
        _arguments.utf8("function", function)
    named = [(f"summary {i}", _arguments.utf8("summaries", _arguments.text("summaries", text)))
             for i, text in enumerate(_arguments.items("summaries", summaries, "an iterable of summary texts"))]
    return _engine_call(_engine.load_summaries, named, function=function).engine


def _dim_labels(dim_names: Mapping[Key, Mapping[int, str]]) -> list[tuple[Key, int, str]]:
    """{input: {dim: label}} (the reference's dim_names mapping) as the engine's explicit labels."""
    out = []
    for key, dims in dim_names.items():
        if isinstance(key, bool) or not isinstance(key, (str, int)):
            _arguments.key("dim_names", key)
        if isinstance(key, str):
            _arguments.utf8("dim_names", key)
        if not isinstance(dims, Mapping):
            raise TypeError(f"hookscope: dim_names[{key!r}]: expected a mapping of dimension to label, got {dims!r}")
        for d, label in dims.items():
            if isinstance(d, bool) or not isinstance(d, int):
                raise TypeError(f"hookscope: dim_names[{key!r}]: a dimension is an int >= 0, got {d!r}")
            _count("dim_labels", d)
            if isinstance(label, str):
                _arguments.utf8(f"dim_names[{key!r}][{d}]", label)
            if not isinstance(label, str):
                raise TypeError(f"hookscope: dim_names[{key!r}][{d}]: a label is a str, got {label!r}")
            out.append((key, d, label))
    return out


def shapes_options(batch: Collection[Key] | bool | None = None, batch_all: bool = False,
                   dim_names: bool | Mapping[Key, Mapping[int, str]] | None = False,
                   profiles: str | int = 1) -> dict:
    """ShapeEngine.infer_dynamic_shapes' keywords from the Python spellings: ``batch`` names/positions or True (every
    input); ``dim_names`` False, True (automatic labels: batch_size, sequence_length, ...) or {input: {dim: label}};
    ``profiles`` 1 (one consistent TensorRT profile) or "auto" (one per phase, e.g. prefill and decode)."""
    profile_phases = _engine_call(_engine.parse_profile_phases, str(profiles))  # 1 as the command's "1"
    batch_all = _arguments.flag("batch_all", batch_all)
    if batch is True:
        batch, batch_all = None, True
    names = _names("batch", None if batch is False else batch)
    explicit = dim_names is not None and not isinstance(dim_names, bool)
    if explicit and not isinstance(dim_names, Mapping):
        raise TypeError(f"hookscope: dim_names: expected True, False or a mapping {{input: {{dim: label}}}}, got "
                        f"{dim_names!r}")
    options = {
        "batch_dimension_for": names,
        "batch_all": bool(batch_all),
        "dim_names": dim_names is True,
        "dim_labels": _dim_labels(dim_names) if explicit else [],
        "profile_phases": profile_phases,
    }
    _engine_call(_engine.check_shapes_options, **options)  # the library's rules, before any source is read
    return options


def infer(paths: Paths, *, function: str | None = None, store_n_calls: int | str | None = _STORE_N_CALLS_DEFAULT,
          value_if_missing: Mapping[Key, Any] | None = None, signature_from: PathLike | None = None,
          remove_inputs: Collection[str] | None = None, batch: Collection[Key] | bool | None = None,
          batch_all: bool = False, dim_names: bool | Mapping[Key, Mapping[int, str]] | None = False,
          profiles: str | int = 1) -> DynamicShapes:
    """``hookscope-shapes infer`` as a function, on record files or summaries: the DynamicShapes (``.write(format)``
    = --format FORMAT for each name of ``output_formats()``, ``.write("torch", typed=True)`` = --typed, and
    ``.warnings_for(format)`` the warnings the command prints with it; also ``.to_json()``, ``.to_trtexec()``,
    ``.to_ort_options()``, ``.to_torch_tensorrt()``, ``.to_onnx()``, ``.to_typed_json()``, ``.report()``;
    ``.inputs``, ``.outputs``, ``.relations``, ``.tensorrt_profiles``, ``.warnings``). The readers' warnings are
    issued as RecordWarning."""
    options = shapes_options(batch, batch_all, dim_names, profiles)
    loaded = _load(paths, function=function, store_n_calls=store_n_calls, value_if_missing=value_if_missing,
                   signature_from=signature_from, remove_inputs=remove_inputs)
    ds = loaded.engine.infer_dynamic_shapes(**options)
    return ds


class InferredArguments:
    """Representative arguments (``hookscope-shapes args``): ``value`` in the record format's JSON encoding (parsed),
    ``call`` the index of the recorded call they start from, ``warnings`` what could not be done as asked."""

    __slots__ = ("value", "call", "warnings")

    def __init__(self, value: Any, call: int | None, warnings: list[str]):
        if call is not None:
            _arguments.count("call", call)
        if isinstance(warnings, (str, bytes, Mapping)) or not isinstance(warnings, Iterable):
            raise TypeError(f"hookscope: warnings: expected a list of str, got {type(warnings).__name__}")
        self.value, self.call = value, call
        self.warnings = [_arguments.text("warnings", w)
                         for w in _arguments.items("warnings", warnings, "a list of str")]

    def to_json(self) -> str:
        """What ``hookscope-shapes args`` prints."""
        return json.dumps(self.value, separators=(",", ":"))

    def __repr__(self) -> str:
        return f"InferredArguments(call={self.call!r}, value={self.to_json()}, warnings={self.warnings!r})"


def infer_arguments(paths: Paths, *, function: str | None = None,
                    store_n_calls: int | str | None = _STORE_N_CALLS_DEFAULT,
                    value_if_missing: Mapping[Key, Any] | None = None, signature_from: PathLike | None = None,
                    remove_inputs: Collection[str] | None = None, index: int | None = None, flat: bool = False,
                    as_args_kwargs: bool = False, avoid_specialization: bool = False) -> InferredArguments:
    """``hookscope-shapes args`` as a function: the representative arguments, the call chosen and the warnings
    (``avoid_specialization``: the first stored call whose dynamic dims are all >= 2, else the one with the most)."""
    flat, as_args_kwargs = _arguments.flag("flat", flat), _arguments.flag("as_args_kwargs", as_args_kwargs)
    avoid_specialization = _arguments.flag("avoid_specialization", avoid_specialization)
    if index is not None:
        _count("candidate", index)
    _engine_call(_engine.check_argument_options, candidate=index, flat=flat, as_args_kwargs=as_args_kwargs,
                 avoid_specialization=avoid_specialization)  # the library's rules, before any source is read
    stored = _engine.stored_call_option(candidate=index, flat=flat, as_args_kwargs=as_args_kwargs,
                                        avoid_specialization=avoid_specialization) or ""
    loaded = _load(paths, function=function, store_n_calls=store_n_calls, value_if_missing=value_if_missing,
                   signature_from=signature_from, remove_inputs=remove_inputs, stored_call_option=stored)
    chosen = loaded.engine.infer_arguments(candidate=index, flat=flat, as_args_kwargs=as_args_kwargs,
                                           avoid_specialization=avoid_specialization)
    return InferredArguments(json.loads(chosen.json), chosen.call, list(chosen.warnings))
