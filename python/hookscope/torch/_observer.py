"""InputObserver, hookscope.torch's public class: its context manager replaces a module's method for a `with` block
and records its calls; its methods answer from the engine. The helpers it uses (the value codec, the engine factory,
info, phases, discrepancies, the export structures) are handed what they need and never import this module."""
from __future__ import annotations

import contextlib
import inspect
import json
import os
import threading
import time
import warnings
import weakref
from typing import Any, Callable, Iterator, Mapping, Sequence

import torch
import torch.utils._pytree as _pytree

from .. import _engine, _errors, shapes_options
from .._arguments import callable_, flag
from .._arguments import path as _path
from . import _checks, _sentences
from ._codec import Unrecordable, build_template, decode, decode_call, signature_json
from ._discrepancies import ACCEPTED as _DISCREPANCY_MODELS
from ._discrepancies import check_discrepancies as _check_discrepancies
from ._engines import new_engine
from ._export import (_with_input_types, specialised_dims, to_torch_dynamic_shapes, to_torch_tensorrt_inputs,
                      to_torch_tensorrt_kwargs)
from ._info import InputObserverInfo, Observer
from ._phases import phases as _phases
from ._values import NO_RESULT, Recorded, StoredCall, copy_leaves, flatten, flatten_call, inputs_template, line_template

_OBSERVERS: "weakref.WeakSet[InputObserver]" = weakref.WeakSet()

# How the observer spells the library's options in its refusals: the references' keywords.
_OBSERVER_KEYWORDS = {"candidate": "index_or_args_or_kwargs", "batch_dimension_for": "set_batch_dimension_for"}


def _after_fork_in_child() -> None:
    # A thread of the parent may have held an observer's lock at fork(): it does not exist in the child.
    for o in list(_OBSERVERS):
        o._lock = threading.RLock()
        o._busy = False


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


class _Count(int):
    """num_obs: an int that can also be called, as the reference's num_obs() method is."""

    def __call__(self) -> int:
        return int(self)


@Observer.register  # what InputObserverInfo and InputCandidate take
class InputObserver:
    """Observes the calls of a module's method and infers torch.export arguments and dynamic shapes.

    value_if_missing: {name or position: tensor (or value)} for arguments some calls leave out (e.g.
    ``pixel_values=torch.empty((0, 3, 896, 896))``): used for shapes and structure only; its keys are checked
    against the signature when the first ``with`` block starts (the references check them in the observed call).
    With a key given by name, the arguments and dynamic shapes are keyed by name, as the references give them.
    store_n_calls: calls kept per ``with`` block (the reference takes it in ``__call__``; both work; 0 stores none).

    Refusals carry the references' sentences after ``hookscope: `` and are of their types (``_sentences``).

    Observing never makes the observed call fail: a call whose inputs cannot be recorded (a tensor of a dtype the
    record format lacks, an object that is no pytree node, ...) returns normally, is left out, and one warning per
    reason names the function and the value's path. Calls from several threads are recorded one at a time.
    """

    def __init__(self, value_if_missing: Mapping[str | int, Any] | None = None, store_n_calls: int = 3):
        self.value_if_missing = _checks.value_if_missing(value_if_missing)
        self.store_n_calls = _checks.store_n_calls(store_n_calls)
        self._engine: _engine.ShapeEngine | None = None
        self._function = ""
        self._signature: list[dict] | None = None
        self._names: list[str] = []
        self._parameters: list[inspect.Parameter] = []
        self._calls: list[StoredCall] = []
        self._structs: dict[str, tuple[Any, Any, int]] = {}   # struct name -> (node type, context, fields) last seen
        self._templates: dict[Any, Any] = {}  # structure key -> Template (the record encoding of that structure)
        # The engine, _calls and the reservations: one call recorded at a time. Reentrant, and _busy set while held: a
        # signal handler calling the model while this thread holds it must neither deadlock nor record in the middle
        # of another call's section (the engine's calls and _calls would then disagree on order); it is left out.
        self._lock = threading.RLock()
        self._busy = False
        _OBSERVERS.add(self)
        self._store_limit = 0  # the engine keeps calls while num_obs < this (its begin_recording's rule)
        self._reserved = 0  # calls to be stored, counted before the model runs (their inputs are copied then)
        self._warned: set[tuple] = set()  # the reasons warned of (_warn)
        self._removed: set[str] = set()  # remove_inputs' names: info's candidates and signature leave them out

    # --- recording -------------------------------------------------------------------------------------------
    @contextlib.contextmanager
    def __call__(self, model: torch.nn.Module, store_n_calls: int | None = None,
                 method_name: str = "forward") -> Iterator["InputObserver"]:
        """Replaces ``model.<method_name>`` for the block, records its calls, and restores it even on exceptions.
        A call the engine refuses because of value_if_missing (a position beyond the call's positional arguments)
        still runs and returns; the block raises that refusal when it ends (the references raise it in the call)."""
        _checks.method(model, method_name)
        if store_n_calls is not None:
            _checks.store_n_calls(store_n_calls)
        had_own = method_name in vars(model)
        own = vars(model).get(method_name)
        captured = getattr(model, method_name)
        sig = inspect.signature(captured)
        n = self.store_n_calls if store_n_calls is None else store_n_calls
        if self._engine is None:
            _checks.value_if_missing_keys(self.value_if_missing, list(sig.parameters.values()))
            # The limit is this block's (each block may give its own, as torch.onnx's): kept by the reservations.
            self._signature = signature_json(sig)
            self._names = [p.name for p in sig.parameters.values()]
            self._parameters = list(sig.parameters.values())
            self._function = f"{type(model).__name__}.{method_name}"
            self._engine, _ = new_engine(self._signature, self.value_if_missing)
        with self._lock:
            self._busy = True
            try:
                self._engine.begin_recording()
                # _reserved is the stored calls plus those still running (a thread's call begun in an earlier block
                # stores when it returns): this block reserves n more.
                self._store_limit = self._reserved + n
            finally:
                self._busy = False
        recording = [True]
        refusals: list[BaseException] = []  # this block's value_if_missing refusals, raised when it ends
        perf_counter = time.perf_counter

        def observed(*args, **kwargs):
            if not recording[0]:
                return captured(*args, **kwargs)
            # The inputs are flattened (and copied, when the call is to be stored) before the call: a cache the model
            # updates in place is recorded as it came in.
            try:
                inputs = self._take_inputs(args, kwargs)
            except Exception as e:  # never the model's failure: the call is left out
                if isinstance(e, Unrecordable) and e.path == "?":
                    try:
                        build_template((args, kwargs), "inputs", call=True)  # the same error, with the value's path
                    except Unrecordable as located:
                        e = located
                    except Exception:  # locating failed otherwise (a key's repr raised): the first error stands
                        pass
                self._warn(e, "the call is not recorded")
                inputs = None
            if inputs is None:
                return captured(*args, **kwargs)
            begin = perf_counter()
            try:
                result = captured(*args, **kwargs)
            except BaseException:
                self._store(inputs, refusals=refusals)  # a call that raised has no result, but its inputs were seen
                raise
            self._store(inputs, result, perf_counter() - begin, refusals)
            return result

        # transformers' generate() reads forward's signature (e.g. to decide whether to pass position_ids).
        observed.__signature__ = sig  # type: ignore[attr-defined]
        setattr(model, method_name, observed)
        try:
            yield self
        except BaseException:
            for refused in refusals:  # the block's own exception goes on: its refusals are warned of
                self._warn(_sentences.position_not_given(refused.facts, self._names), "the call is not recorded")
            raise
        finally:
            recording[0] = False
            if had_own:
                setattr(model, method_name, own)
            else:
                delattr(model, method_name)
        if refusals:
            raise _sentences.position_not_given(refusals[0].facts, self._names)

    def _warn(self, error: BaseException, consequence: str) -> None:
        """One warning per reason (not one per call), naming the function."""
        # The reason is the error's facts, never the words of the message: its type, the library's kind, the codec's
        # path, the sentence it carries (else its arguments), and what is left out because of it.
        sentence = getattr(error, "sentence", None)
        reason: tuple = (consequence, type(error), getattr(error, "kind", None), getattr(error, "path", None),
                         error.args if sentence is None else sentence)
        try:
            hash(reason)
        except TypeError:  # arguments that cannot be keys: one warning per type of error
            reason = reason[:4]
        if reason in self._warned:
            return
        self._warned.add(reason)
        # The library's errors and the codec's carry their sentence, quoted without their own prefix.
        quoted = error if sentence is None else sentence
        text = f"hookscope: recording a call of {self._function}: {quoted} ({consequence})"
        try:
            warnings.warn(text, stacklevel=4)
        except Exception:  # warnings turned into errors (-W error): the model's call must still not fail
            pass

    def _take_inputs(self, args: tuple, kwargs: dict):
        """(the call's inputs flattened, their template) or None when the engine keeps no more calls; tensors are
        copied only for a call that will be stored (a slot is reserved for it)."""
        if self._reserved >= self._store_limit:  # not stored: nothing to flatten or copy
            return None
        leaves: list = []
        contexts: list = []
        key = flatten_call(args, kwargs, leaves, contexts)
        template = inputs_template(args, kwargs, key, self._templates, self._structs)
        with self._lock:
            if self._busy:
                raise RuntimeError("called from a signal handler while this thread was recording a call")
            if self._reserved >= self._store_limit:
                return None
            self._reserved += 1
        return Recorded(key, copy_leaves(leaves), contexts), template

    def _store(self, taken, result: Any = NO_RESULT, latency: float | None = None,
               refusals: list[BaseException] | None = None) -> None:
        """Hands the call (and its result: the outputs' dims, ``outputs()``) to the engine and keeps it. A result that
        cannot be recorded is left out of the record with a warning; a call the engine refuses is left out with a
        warning (the model's call must not fail because of the observer), except a refusal of value_if_missing,
        appended to ``refusals`` (its block raises it when it ends)."""
        inputs, template = taken
        try:
            line, outputs = line_template(
                template, result, lambda e: self._warn(e, f"the results of {self._function} are not recorded"))
            leaves = inputs.leaves
            shapes = [leaves[i].shape for i in template.tensor_index]
            if outputs is not None:
                shapes += [x.shape for x in outputs.leaves if isinstance(x, torch.Tensor)]
        except Exception as e:
            with self._lock:
                self._busy = True
                self._reserved -= 1
                self._busy = False
            self._warn(e, "the call is not recorded")
            return
        refused = None
        stored = StoredCall(line, shapes, inputs, outputs, latency)
        with self._lock:
            self._busy = True
            try:
                # The engine keeps the call and appends it to _calls in one step: a signal handler runs between two
                # Python instructions and may raise (a RecursionError when handlers nest), never inside that step.
                kept = self._engine.add_call_shapes(line.compiled, shapes, stored, self._calls)
            except Exception as e:
                kept, refused = False, e
            try:
                if not kept:
                    self._reserved -= 1
            finally:
                self._busy = False
        if refused is not None:
            if refusals is not None and getattr(refused, "kind", None) == "if_missing_position_not_given":
                refusals.append(refused)
            else:
                self._warn(refused, "the call is not recorded")

    # --- what was seen ---------------------------------------------------------------------------------------
    def _check(self) -> _engine.ShapeEngine:
        if self._engine is None or self._engine.num_obs == 0:
            raise _sentences.no_inputs_captured(self._engine is not None)
        return self._engine

    def _by_name(self) -> bool:
        """Whether infer_arguments() and infer_dynamic_shapes() key positional calls' inputs by name (a dict, not a
        tuple): the references add a value_if_missing given by name as a keyword argument of every call, then move
        the positional arguments to their parameters' names (not with ``*args``, whose arguments have no names)."""
        return (any(isinstance(k, str) for k in self.value_if_missing)
                and not any(p.kind == inspect.Parameter.VAR_POSITIONAL for p in self._parameters))

    @property
    def num_obs(self) -> _Count:
        """Number of stored calls (also callable: ``num_obs()``)."""
        return _Count(0 if self._engine is None else self._engine.num_obs)

    def _stored_inputs(self, i: int) -> tuple[tuple, dict]:
        """The i-th stored call's inputs as the model received them (copies): what info's candidates show."""
        args, kwargs = self._calls[i].inputs.materialize()
        kept = [a for j, a in enumerate(args) if j >= len(self._names) or self._names[j] not in self._removed]
        return tuple(kept), {k: v for k, v in kwargs.items() if k not in self._removed}

    def is_empty(self) -> bool:
        """True when no call is stored (yobx's is_empty)."""
        return self.num_obs == 0

    @property
    def info(self) -> InputObserverInfo | None:
        """The stored calls as the references' InputObserverInfo (None before the first `with` block): ``len(info)``,
        ``inputs`` (one InputCandidate per stored call), ``flat_outputs``, ``outputs_specs``, ``latencies``,
        ``signature_names``, ``default_values``, ``value_if_missing``."""
        return None if self._engine is None else InputObserverInfo(self)

    @property
    def engine_info(self) -> dict | None:
        """The engine's view: per stored call its inputs (JSON encoding), constants, leaf count and leaves aligned on
        the best candidate; the best candidate's index; the parameters."""
        if self._engine is None:
            return None
        with _sentences.in_their_words():
            info = self._engine.info()
        for c in info["calls"]:
            c["inputs"] = json.loads(c["inputs"])
            c["constants"] = json.loads(c["constants"])
            c["aligned"] = [json.loads(a) for a in c["aligned"]]
        return info

    def remove_inputs(self, input_names: Sequence[str | int]) -> int:
        """Forgets these inputs (names or positions) in every stored call; returns how many were removed. The
        variadic ``*args``/``**kwargs`` are refused (ValueError); a name no stored call holds removes nothing, with
        a warning naming it (yobx returns 0: code written for several versions of a model keeps working)."""
        wanted = _checks.input_names(input_names)
        if self._engine is None or self._engine.num_obs == 0:
            raise _sentences.no_input_captured_to_remove(self._engine is not None)
        _checks.not_variadic(wanted, self._parameters)
        names = [self._names[k] if isinstance(k, int) and k < len(self._names) else str(k) for k in wanted]
        removed = self._engine.remove_inputs(names)
        self._removed.update(names)
        if not removed:
            warnings.warn(f"hookscope: remove_inputs: no stored call holds {wanted!r}: nothing was removed",
                          stacklevel=2)
        return removed

    def check_discrepancies(self, onnx_model=None, atol: float = 1e-4, rtol: float = 0.1, hist=(0.1, 0.01),
                            progress_bar: bool = False, include_io: bool = True, skip_none: bool = True,
                            initializer: Callable | None = None, *, onnx_program=None) -> list[dict]:
        """Runs every stored call's inputs through ``onnx_model`` (an ONNX file name, an
        ``onnx.ModelProto``, an ONNX IR model, or an exporter's result holding one: ``torch.onnx.ONNXProgram``, yobx's
        ``to_onnx`` result, ...; ``_discrepancies.ACCEPTED``) in ONNX Runtime and compares the outputs with the observed
        ones: one dict per stored call (abs, rel, SUCCESS, index, duration_torch, ort_duration, n_inputs, n_none,
        n_empty, one count per ``hist`` threshold, inputs/outputs_torch/outputs_ort with include_io, error where ONNX
        Runtime fails or the outputs differ in count, shape or dtype). ``initializer(model_path_or_bytes)`` makes the
        session (torch.onnx's parameter); the default runs on CPU. ``progress_bar`` uses tqdm when it is installed.
        ``onnx_program`` is torch.onnx's name of ``onnx_model``: code written for it passes the model by that name."""
        if onnx_program is not None:
            if onnx_model is not None:
                raise TypeError("hookscope: check_discrepancies: onnx_program: torch.onnx's name of onnx_model: give "
                                "one of them, not both")
            onnx_model = onnx_program
        elif onnx_model is None:
            raise TypeError(f"hookscope: check_discrepancies: onnx_model: missing ({_DISCREPANCY_MODELS})")
        return _check_discrepancies(self, onnx_model, atol, rtol, hist, progress_bar, include_io, skip_none,
                                    initializer)

    # --- arguments -------------------------------------------------------------------------------------------
    def _rebuild(self, v: Any, obj: Any) -> Any:
        """The engine's value v as objects (``_codec.decode``), structs no observed object stands for rebuilt as the
        registered nodes of that name seen in the stored calls."""
        return decode(v, obj, self._structs)

    def infer_arguments(self, index_or_args_or_kwargs: int | tuple | dict | None = None, flat: bool = False,
                        as_args_kwargs: bool = False, avoid_specialization: bool = False):
        """Representative arguments: a dict of keyword arguments, a tuple of positional ones, or ``(args, kwargs)``
        (as_args_kwargs, or when both are needed). Real observed tensors; an argument the representative call left
        out gets an empty placeholder the engine shapes. ``flat``: the tensors as one list (pytree order).
        ``avoid_specialization`` (beyond the reference; ``hookscope-shapes args --avoid-specialization``): instead of
        the reference's choice, the stored call whose dynamic dims are all >= 2 (torch.export specialises 0 and 1),
        else the one with the most, with a warning naming the others."""
        engine = self._check()
        index_or_args_or_kwargs = _checks.candidate(index_or_args_or_kwargs, len(self._calls))
        flat, as_args_kwargs = flag("flat", flat), flag("as_args_kwargs", as_args_kwargs)
        avoid_specialization = flag("avoid_specialization", avoid_specialization)
        try:  # the library's rule: a call given and avoid_specialization exclude each other
            _engine.check_argument_options(candidate=None if index_or_args_or_kwargs is None else 0,
                                           avoid_specialization=avoid_specialization)
        except _engine.LoadError as e:
            raise _errors.spelled(e, _OBSERVER_KEYWORDS) from None
        if index_or_args_or_kwargs is None or isinstance(index_or_args_or_kwargs, int):
            with _sentences.in_their_words():
                chosen = engine.infer_arguments(candidate=index_or_args_or_kwargs, as_args_kwargs=True,
                                                avoid_specialization=avoid_specialization)
            for w in chosen.warnings:
                warnings.warn(w, stacklevel=2)
            snap_args, snap_kwargs = self._calls[chosen.call].snapshot
        else:
            args, kwargs = ((index_or_args_or_kwargs, {}) if isinstance(index_or_args_or_kwargs, tuple)
                            else ((), dict(index_or_args_or_kwargs)))
            candidate = build_template((args, kwargs), "candidate", call=True)
            leaves: list = []
            flatten((args, kwargs), leaves, [])
            shapes = [leaves[i].shape for i in candidate.tensor_index]
            with _sentences.in_their_words():
                chosen = engine.infer_arguments(candidate=candidate.fill(shapes) + "}", as_args_kwargs=True)
            snap_args, snap_kwargs = list(args), kwargs
        args, kwargs = decode_call(json.loads(chosen.json), snap_args, snap_kwargs, self._names, self._structs)
        if flat:
            return [t for t in _pytree.tree_leaves((args, kwargs)) if isinstance(t, torch.Tensor)]
        if as_args_kwargs:
            return args, kwargs
        if not kwargs:
            return dict(zip(self._names, args)) if self._by_name() else args
        if not args:
            return kwargs
        # Both: positional arguments move to keywords by parameter name (the reference's rule), unless *args takes
        # some (then only (args, kwargs) can say it).
        if any(p.get("kind") == "var_positional" for p in self._signature or ()):
            raise _sentences.variadic_as_one()
        return {**dict(zip(self._names, args)), **kwargs}

    # --- dynamic shapes --------------------------------------------------------------------------------------
    def _dynamic_shapes(self, set_batch_dimension_for=None, dim_names=None, phases=False) -> _engine.DynamicShapes:
        engine = self._check()
        batch = _checks.batch_keys(set_batch_dimension_for, self._parameters)
        phases = flag("phases", phases)
        if batch is not None and batch is not True and batch is not False:
            batch = [self._names[k] if isinstance(k, int) and k < len(self._names) else k for k in batch]
        if dim_names is None or (isinstance(dim_names, int) and not isinstance(dim_names, bool)):
            dim_names = flag("dim_names", bool(dim_names) if dim_names is None else dim_names)
        with _sentences.in_their_words():
            return engine.infer_dynamic_shapes(
                **shapes_options(batch, False, dim_names, "auto" if phases else 1))

    def infer_dynamic_shapes(self, set_batch_dimension_for: set[int | str] | bool | None = None,
                             dim_names: bool | Mapping[str | int, Mapping[int, str]] | None = None,
                             as_strings: bool = False):
        """torch.export's ``dynamic_shapes``: the inputs' container types, per tensor {dim: Dim}; without
        ``dim_names`` every dynamic dim is ``Dim.DYNAMIC``; with ``dim_names=True`` (automatic names:
        batch_size, sequence_length, ...) or {input: {dim: label}}, one ``Dim`` object per label, shared only by
        dimensions equal in every call. ``as_strings=True``: the labels themselves (yobx's dim_names output, for
        torch.onnx's dynamic_axes or a report; torch.export wants the Dims)."""
        as_strings = flag("as_strings", as_strings)
        ds = self._dynamic_shapes(set_batch_dimension_for, dim_names)
        for w in ds.warnings:  # an option that changes nothing (a typo) is said, not ignored silently
            if w.kind in ("unknown_input", "label_names_no_dim"):
                warnings.warn(w, stacklevel=2)
        spec = to_torch_dynamic_shapes(ds, as_strings)
        if isinstance(spec, tuple) and self._by_name():  # keyed by name, as infer_arguments gives the arguments
            spec = dict(zip(self._names, spec))
        try:
            args, kwargs = self.infer_arguments(as_args_kwargs=True)
        except Exception:  # the engine's own error comes from whoever asks for the arguments
            return spec
        return _with_input_types(spec, args, kwargs, self._names)

    def report(self, set_batch_dimension_for=None, dim_names=None) -> str:
        """The engine's table: per input the shapes seen, dynamic dims, ranges and labels, then the warnings."""
        return self._dynamic_shapes(set_batch_dimension_for, dim_names).report()

    def shape_warnings(self, set_batch_dimension_for=None, dim_names=None) -> list[str]:
        """The inference's warnings (a dynamic dim seen only as 0 or 1, ...), as ``report()`` lists them."""
        return list(self._dynamic_shapes(set_batch_dimension_for, dim_names).warnings)

    def tensorrt_profiles(self, set_batch_dimension_for=None, phases: bool = False
                          ) -> list[dict[str, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]]]:
        """TensorRT optimisation profiles (dynamic_shapes::tensorrt_profiles()), each {input_name: (min, opt, max)}
        consistent with every relation (opt is an observed call), input names as torch.onnx.export(dynamo=True)
        names the graph inputs: the flattened path's components joined by '_'. ``phases=True``: one profile per
        phase (e.g. prefill and decode) instead of one for all calls."""
        ds = self._dynamic_shapes(set_batch_dimension_for, None, phases)
        names = {t["name"]: "_".join(t["path"]) for t in ds.inputs}
        return [{names[r["input"]]: (tuple(r["min"]), tuple(r["opt"]), tuple(r["max"])) for r in p["shapes"]}
                for p in ds.tensorrt_profiles]

    def torch_tensorrt_inputs(self, set_batch_dimension_for=None, phases: bool = False) -> list:
        """One ``torch_tensorrt.Input`` per tensor input (``to_torch_tensorrt_inputs``): min/opt/max from
        ``tensorrt_profiles()``, ``profiles=[...]`` with ``phases=True`` and several phases; raises ImportError
        without torch_tensorrt (``torch_tensorrt_kwargs`` gives the keyword arguments anyway)."""
        return to_torch_tensorrt_inputs(self._dynamic_shapes(set_batch_dimension_for, None, phases))

    def torch_tensorrt_kwargs(self, set_batch_dimension_for=None, phases: bool = False) -> list[dict]:
        """The keyword arguments of those ``torch_tensorrt.Input`` objects (``to_torch_tensorrt_kwargs``)."""
        return to_torch_tensorrt_kwargs(self._dynamic_shapes(set_batch_dimension_for, None, phases))

    def relations(self, set_batch_dimension_for=None, dim_names=None) -> list[dict]:
        """Exact relations between dynamic dims held in every call (dynamic_shapes::relations()): each a dict with
        target/terms ({input, dim, label}), k, c, text (``total_sequence_length = past_sequence_length +
        sequence_length``), torch_derived (expressible as a derived torch.export Dim), supporting_calls (the calls
        giving its dims, each satisfying it) and distinct_points (distinct value tuples among them: the evidence, see
        docs/export_formats.md "Relations and profiles")."""
        return list(self._dynamic_shapes(set_batch_dimension_for, dim_names).relations)

    def outputs(self) -> list[dict]:
        """The results' tensors as the engine sees them (dynamic_shapes::outputs(), `--format report`'s outputs):
        per tensor its name (``result.logits``, ``result.past_key_values.0``, ... by the inputs' flattening), shapes
        seen, dynamic dims with labels (an input's label where the values are the same in every call)."""
        return list(self._dynamic_shapes(None, True).outputs)

    def select(self, predicate: Callable[[tuple, dict], bool]) -> "InputObserver":
        """A new observer holding the stored calls for which ``predicate(args, kwargs)`` is true, with their observed
        tensors: e.g. one phase of generate() (``lambda a, kw: kw["input_ids"].shape[1] > 1``, the prefill) when one
        exported program cannot serve every phase."""
        callable_("predicate", predicate)
        self._check()
        chosen = [c for c in self._calls
                  if predicate(*c.inputs.materialize())]
        if not chosen:
            raise ValueError("hookscope: select: the predicate holds for no stored call")
        return self._subset(chosen)

    def _subset(self, chosen: list[StoredCall]) -> "InputObserver":
        """A new observer holding these stored calls (select, phases)."""
        out = InputObserver(self.value_if_missing, store_n_calls=len(chosen))
        out._engine_n = len(chosen)
        out._signature, out._names, out._function = self._signature, self._names, self._function
        out._parameters = self._parameters
        out._structs = dict(self._structs)
        out._removed = set(self._removed)
        # The stored calls hold the removed inputs as observed: the engine removes them again.
        out._engine, kept = new_engine(self._signature, self.value_if_missing, [c.call_json for c in chosen],
                                       self._removed)
        out._calls = [chosen[i] for i in kept]
        out._reserved = len(out._calls)
        return out

    def phases(self, set_batch_dimension_for: set[int | str] | bool | None = None,
               dim_names: bool | Mapping[str | int, Mapping[int, str]] | None = None) -> list:
        """One export bundle per phase (``hookscope.torch.Phase``: name, args, kwargs, dynamic_shapes,
        backed_size_oblivious, calls, ``export(model)``), the phases those of ``tensorrt_profiles(phases=True)``
        (e.g. a decoder's prefill and decode steps; one phase, "all calls", when no dim splits the calls)."""
        return _phases(self, set_batch_dimension_for, dim_names)

    def needs_backed_size_oblivious(self, arguments=None, dynamic_shapes=None) -> bool:
        """True when a dim the dynamic shapes declare dynamic is 0 or 1 in the arguments (by default those of
        infer_arguments() and infer_dynamic_shapes()): torch.export then specialises it unless the export runs under
        ``torch.fx.experimental._config.patch(backed_size_oblivious=True)`` (yobx's needs_backed_size_oblivious)."""
        _checks.structures(arguments, dynamic_shapes)
        arguments = self.infer_arguments() if arguments is None else arguments
        dynamic_shapes = self.infer_dynamic_shapes() if dynamic_shapes is None else dynamic_shapes
        var_keyword = next((p["name"] for p in self._signature or () if p.get("kind") == "var_keyword"), None)
        return bool(specialised_dims(arguments, dynamic_shapes, self._names, var_keyword))

    def write_records(self, path) -> int:
        """Writes the stored calls as a record file (docs/record_format.md) that `hookscope-shapes` and
        hookscope.infer read; returns the number of records."""
        _path("path", path)
        self._check()
        try:
            f = open(path, "w", encoding="utf-8")
        except OSError as e:  # the type kept (FileNotFoundError, PermissionError, ...), the sentence hookscope's
            error = type(e)(f"hookscope: path: cannot write {os.fsdecode(path)!r}: {e.strerror}")
            error.errno = e.errno
            raise error from None
        with f:
            for i, stored in enumerate(self._calls):
                record: dict[str, Any] = {"function": self._function}
                if i == 0:
                    record["signature"] = self._signature
                record.update(stored.call)
                line = json.dumps(record, separators=(",", ":"))  # ASCII: its length is its size in bytes
                if len(line) > _engine.MAX_RECORD_LINE_BYTES:  # the library's writer elides the largest values
                    line = _engine.fit_record_line(line)
                f.write(line + "\n")
        return len(self._calls)
