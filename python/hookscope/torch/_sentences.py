"""The refusals of ``hookscope.torch.InputObserver`` in the reference observers' words (yobx's, onnx-diagnostic's and
torch.onnx's ``InputObserver``): each message is ``hookscope: `` then the reference's sentence, in its case and words,
then hookscope's detail, so that code matching the references' messages (``assertRaisesRegex``, ``in str(e)``) keeps
working. Each exception is of a type that is (or subclasses) the one the reference raises, and carries ``sentence``
(its message after the prefix).

The engine's refusals are said from their kind and facts (``InferenceError.kind``/``.facts``), the observer's own from
what it knows; nothing here reads the words of another message. docs/python.md has the table."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, Sequence

from .. import _engine
from .._arguments import ArgumentTypeError, ArgumentValueError

InferenceError = _engine.InferenceError


class NotImplementedInferenceError(InferenceError, NotImplementedError):
    """A refusal the references raise as ``NotImplementedError`` (a ``value_if_missing`` position beyond a call's
    positional arguments, calls that do not align on the best candidate): also hookscope's ``InferenceError`` (a
    ValueError and a RuntimeError)."""


def _made(cls: type, sentence: str, kind: str | None = None, facts: dict | None = None) -> BaseException:
    error = cls(f"hookscope: {sentence}")
    error.sentence = sentence
    if kind is not None:
        error.kind, error.facts = kind, dict(facts or {})
    return error


# --- the observer's own refusals --------------------------------------------------------------------------------
def no_inputs_captured(blocks_run: bool) -> RuntimeError:
    """infer_dynamic_shapes, infer_arguments, check_discrepancies, ... with no stored call."""
    detail = ("The with blocks stored no call (store_n_calls=0, or the method was not called)." if blocks_run
              else "Run the model inside `with observer(model):` first.")
    return _made(RuntimeError, f"No inputs were captured. {detail}")


def no_input_captured_to_remove(blocks_run: bool) -> RuntimeError:
    """remove_inputs with no stored call: yobx's two sentences (before any block; after blocks that stored none)."""
    if blocks_run:
        return _made(RuntimeError, "No captured candidates. The with blocks stored no call: nothing to remove.")
    return _made(RuntimeError, "No input was captured. Run the model inside `with observer(model):` first.")


def variadic_not_removable(name: str, position: int | None) -> ValueError:
    """remove_inputs naming ``*args`` (yobx shows its name and position) or ``**kwargs``."""
    shown = repr((name, position)) if position is not None else name
    star = "*" if position is not None else "**"
    return _made(ValueError, f"Cannot remove variadic {shown}: the variadic parameter {star}{name} is no input that "
                             f"can be removed (remove_inputs: input_names).")


def missing_method(model: Any, method_name: str) -> ValueError:
    return _made(ValueError, f"Model type {type(model).__name__} does not have a method {method_name!r}. "
                             f"method_name names a method of the model to observe.")


def unexpected_key_type(key: Any) -> TypeError:
    """A value_if_missing key neither a name (str) nor a position (int)."""
    return _made(TypeError, f"Unexpected type {type(key)} for a missing value. The key is {key!r}. A value_if_missing "
                            f"key is a parameter's name (str) or position (int).")


def key_not_in_signature(key: str | int, names: Sequence[str]) -> ValueError:
    """A value_if_missing name the signature does not take, or a position beyond it."""
    shown = f"k={key}" if isinstance(key, int) else repr(key)
    what = "indices" if isinstance(key, int) else "keys"
    return _made(ValueError, f"Unexpected keyword argument {shown} provided as a value_if_missing input for a function "
                             f"that does not accept it. All value_if_missing {what} must be in the observed signature: "
                             f"{tuple(names)}.")


def unexpected_candidate_type(value: Any, shown: str) -> ArgumentTypeError:
    """infer_arguments' index_or_args_or_kwargs of another type than int, tuple, dict or None."""
    return _made(ArgumentTypeError, f"Unexpected type {type(value)} for index_or_args_or_kwargs. Expected a stored "
                                    f"call's index (int), a tuple of positional arguments or a dict of keyword "
                                    f"arguments, got {shown}.")


def no_stored_call(index: int, n_calls: int) -> ArgumentValueError:
    return _made(ArgumentValueError, f"No stored input set for index={index}<{n_calls}. index_or_args_or_kwargs: "
                                     f"{n_calls} calls are stored (a negative index counts from the end).")


def variadic_as_one() -> RuntimeError:
    return _made(RuntimeError, "Cannot return arguments as a single tuple or a single dictionary because of '*args' in "
                               "the function signature. You need to set `as_args_kwargs=True`.")


def tensor_count_differs(call: int, count: int, input_names: Sequence[str]) -> InferenceError:
    """check_discrepancies: a stored call's tensors and the model's inputs differ in number."""
    return _made(InferenceError, f"There are ({count}) tensors but the model expects {len(input_names)}. "
                                 f"check_discrepancies: stored call {call}; the model's inputs: "
                                 f"{', '.join(input_names)}.")


# --- the engine's refusals ----------------------------------------------------------------------------------------
def position_not_given(facts: dict, names: Sequence[str]) -> NotImplementedInferenceError:
    """A value_if_missing position beyond a call's positional arguments (the references' NotImplementedError)."""
    k, given = facts["position"], facts["given"]
    return _made(NotImplementedInferenceError,
                 f"Unexpected keyword argument k={k} provided as a value_if_missing input for a function that does not "
                 f"accept it. All value_if_missing indices must be in the observed signature: {tuple(names)}, only "
                 f"{given} were given. The call ran and is not stored: value_if_missing replaces positional argument "
                 f"{k} of the calls that give it.", "if_missing_position_not_given", facts)


def _leaf_count_differs(f: dict) -> str:
    who = f"Positional argument {f['position']}" if "position" in f else f"Named argument {f['argument']!r}"
    where = f" (call {f['call']})" if "call" in f else ""
    return (f"{who} has {f['count']} tensors but previously got {f['previous']} tensors. Inference is impossible in "
            f"that case{where}: the calls must flatten it to the same number of leaves.")


def _not_aligned(f: dict) -> str:
    who = f"positional argument {f['position']}" if "position" in f else f"named argument {f['argument']!r}"
    return (f"infer_dynamic_shapes is not implemented when the number of input tensors are not the same in every set "
            f"of inputs. The best candidate (call {f['best_call']}) leaves out {who}, which the calls that give it "
            f"flatten to {f['count']} leaves, not {f['best_count']}.")


def _named_argument_missing(f: dict) -> str:
    return (f"At least one call to the observed model must contain all the named arguments. Call {f['call']} names "
            f"{f['argument']!r}, the best candidate (call {f['best_call']}) names only: {f['best_keywords']}.")


def _constants_differ(f: dict) -> str:
    call = f"call {f['call']}" if "call" in f else "new inputs"
    return (f"Two calls were made with different constant values, {f['constants']} ({call}) != "
            f"{f['best_constants']} (best candidate, call {f['best_call']}).")


def _rank_differs(f: dict, sentence: str) -> str:
    return f"All shapes in shape_list must have the same rank: {sentence}."


def _keyword_collision(f: dict) -> str:
    name = f["argument"]
    return (f"Keyword argument name collision: received a keyword argument {name!r} which conflicts with the "
            f"**{name} parameter used to collect extra keyword arguments. Passing a keyword argument with this name "
            f"is not supported.")


_ENGINE = {
    "leaf_count_differs": lambda f, s: _leaf_count_differs(f),
    "not_aligned": lambda f, s: _not_aligned(f),
    "named_argument_missing": lambda f, s: _named_argument_missing(f),
    "constants_differ": lambda f, s: _constants_differ(f),
    "rank_differs": _rank_differs,
    "keyword_collision": lambda f, s: _keyword_collision(f),
}


# The refusals the references raise as NotImplementedError.
_NOT_IMPLEMENTED = {"not_aligned"}


def from_engine(error: BaseException) -> BaseException | None:
    """The engine's refusal in the references' words (the same type, kind and facts), or None when they have no
    sentence for it."""
    kind = getattr(error, "kind", None)
    say = _ENGINE.get(kind) if isinstance(error, InferenceError) else None
    if say is None:
        return None
    cls = NotImplementedInferenceError if kind in _NOT_IMPLEMENTED else type(error)
    return _made(cls, say(error.facts, error.sentence), kind, error.facts)


@contextlib.contextmanager
def in_their_words() -> Iterator[None]:
    """Around the engine's inferences: its refusals raised in the references' words."""
    try:
        yield
    except InferenceError as e:
        said = from_engine(e)
        if said is None:
            raise
        raise said from None
