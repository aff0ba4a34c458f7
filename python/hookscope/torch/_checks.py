"""The InputObserver's argument checks: the references' exception types (ValueError for a value_if_missing key not in
the signature, TypeError for a key that is neither a name nor a position, RuntimeError for an index beyond the
stored calls), where the references refuse the references' sentences (``_sentences``), and otherwise sentences
starting ``hookscope:`` that name the parameter."""
from __future__ import annotations

import inspect
import numbers
import warnings
from typing import Any

from .. import _engine
from .._arguments import _shown, count, key, keys, mapping
from . import _sentences


def value_if_missing(value: Any) -> dict:
    """The constructor's value_if_missing: a mapping (of names or positions to values; the keys are checked when the
    first block starts, value_if_missing_keys, as the references check them when observing)."""
    mapping("value_if_missing", value)
    return dict(value or {})


def store_n_calls(value: Any, name: str = "store_n_calls") -> int:
    """A count: 0 stores no call (the block runs the model unobserved, as the references allow); above, the
    library's rule (check_options)."""
    n = count(name, value)
    if n:
        _engine.check_store_n_calls(n)
    return n


def _accepts(parameters: list[inspect.Parameter], k: str | int) -> str | None:
    """Why the signature cannot take input k (None when it can)."""
    names = [p.name for p in parameters]
    shown = f"({', '.join(names)})"
    if isinstance(k, int):
        return None if k < len(parameters) else f"position {k} is beyond the observed signature {shown}"
    if k in names or any(p.kind == inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    return f"'{k}' is not a parameter of the observed signature {shown}"


def value_if_missing_keys(values: dict, parameters: list[inspect.Parameter]) -> None:
    """At the start of a `with` block (the references check in the observed call, which then fails): every key is a
    name or a position (TypeError) the signature accepts (ValueError), as the references."""
    for k in values:
        if isinstance(k, bool) or not isinstance(k, (str, numbers.Integral)):
            raise _sentences.unexpected_key_type(k)
        key("value_if_missing", k)  # an empty name, a negative position, a name that is no UTF-8
        if _accepts(parameters, k) is not None:
            raise _sentences.key_not_in_signature(k, [p.name for p in parameters])


def not_variadic(wanted: list[str | int], parameters: list[inspect.Parameter]) -> None:
    """remove_inputs: no name or position of ``*args`` or ``**kwargs`` (ValueError, as yobx)."""
    for i, p in enumerate(parameters):
        if p.kind == inspect.Parameter.VAR_POSITIONAL and (p.name in wanted or i in wanted):
            raise _sentences.variadic_not_removable(p.name, i)
        if p.kind == inspect.Parameter.VAR_KEYWORD and (p.name in wanted or i in wanted):
            raise _sentences.variadic_not_removable(p.name, None)


def batch_keys(value: Any, parameters: list[inspect.Parameter]) -> Any:
    """set_batch_dimension_for: None, a bool, or a collection of names or positions. One the signature cannot take is
    left out with a warning: code shared by several models names every input any of them takes, and the references
    accept it."""
    if value is None or isinstance(value, bool):
        return value
    found = keys("set_batch_dimension_for", value)
    kept = []
    for k in found:
        why = _accepts(parameters, k)
        if why is None:
            kept.append(k)
        else:
            warnings.warn(f"hookscope: set_batch_dimension_for: {why}: it changes nothing", stacklevel=4)
    return kept


def method(model: Any, method_name: Any) -> None:
    if not isinstance(method_name, str):
        raise TypeError(f"hookscope: method_name: expected a str, got {type(method_name).__name__} "
                        f"{_shown(method_name)}")
    if not hasattr(model, method_name):
        raise _sentences.missing_method(model, method_name)
    if not callable(getattr(model, method_name)):
        raise ValueError(f"hookscope: method_name: {type(model).__name__}.{method_name} is not a method (a "
                         f"{type(getattr(model, method_name)).__name__})")


def candidate(value: Any, n_calls: int) -> Any:
    """infer_arguments' index_or_args_or_kwargs: None, an index (negative counts from the end, as Python and the
    references' list indexing do), a tuple of positional arguments or a dict of keyword arguments."""
    if value is None or isinstance(value, (tuple, dict)):
        return value
    if isinstance(value, bool) or not isinstance(value, int):
        raise _sentences.unexpected_candidate_type(value, _shown(value))
    index = value + n_calls if value < 0 else value
    if not 0 <= index < n_calls:
        raise _sentences.no_stored_call(value, n_calls)
    return index


def input_names(value: Any) -> list[str | int]:
    """remove_inputs' names or positions (a str alone is one name, not a collection of them: refused)."""
    return keys("input_names", value)


def structures(arguments: Any, dynamic_shapes: Any) -> None:
    """needs_backed_size_oblivious' arguments (as infer_arguments returns them) and dynamic shapes (as
    infer_dynamic_shapes returns them)."""
    if arguments is not None and not isinstance(arguments, (tuple, list, dict)):
        raise TypeError(f"hookscope: arguments: expected a tuple, a dict or (args, kwargs) as infer_arguments gives "
                        f"them, got {type(arguments).__name__} {_shown(arguments)}")
    if dynamic_shapes is not None and not isinstance(dynamic_shapes, (tuple, list, dict)):
        raise TypeError(f"hookscope: dynamic_shapes: expected a tuple or a dict as infer_dynamic_shapes gives them, "
                        f"got {type(dynamic_shapes).__name__} {_shown(dynamic_shapes)}")
