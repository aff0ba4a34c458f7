"""The checks of the public functions' arguments: one sentence per misuse, starting ``hookscope:`` and naming the
parameter, raised before any value reaches the compiled engine (whose binding would answer with pybind11's
"incompatible function arguments")."""
from __future__ import annotations

import math
import numbers
import os
from collections.abc import Collection, Mapping
from typing import Any

_INT64_MAX = 2**63 - 1


class ArgumentTypeError(TypeError, ValueError):
    """An argument of the wrong type where the reference InputObservers raise ValueError (``infer_arguments("x")``):
    both a TypeError and a ValueError, so that code catching either catches it."""


class ArgumentValueError(ValueError, RuntimeError):
    """An argument out of range where the reference InputObservers raise RuntimeError (``infer_arguments(5)`` with
    two stored calls): both a ValueError and a RuntimeError."""


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def flag(name: str, value: Any) -> bool:
    """A bool (0 and 1 too, as Python's own flags take them)."""
    if isinstance(value, bool) or (isinstance(value, int) and value in (0, 1)):
        return bool(value)
    raise TypeError(f"hookscope: {name}: expected True or False, got {type(value).__name__} {_shown(value)}")


def count(name: str, value: Any, minimum: int = 0, maximum: int = _INT64_MAX) -> int:
    """An int in [minimum, maximum] (2**63 - 1 unless given)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"hookscope: {name}: expected an int, got {type(value).__name__} {_shown(value)}")
    value = int(value)
    if value < minimum or value > maximum:
        bound = f">= {minimum}" if maximum == _INT64_MAX else f"from {minimum} to {maximum}"
        raise ValueError(f"hookscope: {name}: expected an int {bound}, got {value}")
    return value


def tolerance(name: str, value: Any) -> float:
    """A finite real >= 0."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"hookscope: {name}: expected a number >= 0, got {type(value).__name__} {_shown(value)}")
    value = float(value)
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"hookscope: {name}: expected a finite number >= 0, got {value}")
    return value


def text(name: str, value: Any, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        raise TypeError(f"hookscope: {name}: expected a str, got {type(value).__name__} {_shown(value)}")
    return value


def utf8(name: str, value: str) -> str:
    """A str the compiled engine takes as text: names and JSON texts are UTF-8 (a lone surrogate, as
    ``decode_text`` gives for bytes that are not UTF-8, names nothing the engine holds)."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise ValueError(f"hookscope: {name}: not UTF-8 text ({e.reason} at index {e.start}): "
                         f"{_shown(value)}") from None
    return value


def items(name: str, value: Any, wanted: str) -> list:
    """The elements of a collection argument; one that cannot be iterated (a 0-d tensor has ``__iter__`` but raises)
    is refused with a sentence naming the parameter."""
    try:
        return list(value)
    except TypeError as e:
        raise TypeError(f"hookscope: {name}: expected {wanted}, got {type(value).__name__} {_shown(value)} ({e})") \
            from None


def path(name: str, value: Any, optional: bool = False):
    """A file name: str, bytes or os.PathLike."""
    if value is None and optional:
        return None
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError(f"hookscope: {name}: expected a path (str, bytes or os.PathLike), got "
                        f"{type(value).__name__} {_shown(value)}")
    return value


def key(name: str, k: Any) -> str | int:
    """An input key: a parameter name (str) or a position (int >= 0)."""
    if isinstance(k, bool) or not isinstance(k, (str, numbers.Integral)):
        raise TypeError(f"hookscope: {name}: an input is named by a str or a position (int), got "
                        f"{type(k).__name__} {_shown(k)}")
    if isinstance(k, str):
        if not k:
            raise ValueError(f"hookscope: {name}: an input name is not empty")
        return utf8(name, k)
    return count(f"{name}: position", k)


def keys(name: str, value: Any) -> list[str | int]:
    """A collection of input keys; a str alone is refused (it is one name, not a collection: write {'name'})."""
    if isinstance(value, (str, bytes)):
        raise TypeError(f"hookscope: {name}: expected a collection of names or positions, got the "
                        f"{type(value).__name__} {_shown(value)} (write [{_shown(value)}] for one input)")
    if isinstance(value, Mapping) or not isinstance(value, Collection):
        raise TypeError(f"hookscope: {name}: expected a collection of names or positions, got "
                        f"{type(value).__name__} {_shown(value)}")
    return [key(name, k) for k in items(name, value, "a collection of names or positions")]


def mapping(name: str, value: Any, optional: bool = True) -> Mapping | None:
    if value is None and optional:
        return None
    if not isinstance(value, Mapping):
        raise TypeError(f"hookscope: {name}: expected a mapping, got {type(value).__name__} {_shown(value)}")
    return value


def callable_(name: str, value: Any, optional: bool = False):
    if value is None and optional:
        return None
    if not callable(value):
        raise TypeError(f"hookscope: {name}: expected a callable, got {type(value).__name__} {_shown(value)}")
    return value


def guard_binding(cls: type, errors: tuple[type, ...]) -> None:
    """Replaces each method of a compiled class by one whose refusals start with ``hookscope:`` and name the
    parameters, from what the binding recorded of each method (``__hookscope_parameters__``: names, and which take a
    bool or a str): a bool or a str parameter given another type is refused before the call (pybind11 would convert
    it); a TypeError of no subclass is pybind11's refusal of the arguments (the binding's own are BindingTypeError)
    and becomes one listing what was given; the library's ``errors`` are raised again naming the method and the
    arguments before their sentence."""
    for name, parameters in cls.__dict__.get("__hookscope_parameters__", {}).items():
        setattr(cls, name, _guarded(cls.__name__, name, getattr(cls, name), list(parameters), errors))


def _guarded(owner: str, name: str, fn, parameters: list[tuple[str, str]], errors: tuple[type, ...]):
    where = f"{owner}.{name}" if name != "__init__" else owner
    names = [n for n, _ in parameters]
    # What each checked parameter must be exactly (a subclass goes through the full check).
    expected = {n: {"bool": bool, "str": str}[t] for n, t in parameters if t in ("bool", "str")}
    by_position = [(i, n, expected[n]) for i, n in enumerate(names) if n in expected]

    def check(n: str, v: Any) -> None:
        (flag if expected[n] is bool else text)(f"{where}: {n}", v)

    def given(args, kwargs) -> dict:
        return {**dict(zip(names, args)), **kwargs}

    def method(self, *args, **kwargs):
        for i, n, t in by_position:  # the hot path (add_call per observed call): one type test per argument
            if i < len(args) and type(args[i]) is not t:
                check(n, args[i])
        for n, v in kwargs.items():
            if n in expected and type(v) is not expected[n]:
                check(n, v)
        try:
            return fn(self, *args, **kwargs)
        except errors as e:
            shown = ", ".join(f"{n}={_shown(v)}" for n, v in given(args, kwargs).items())
            sentence = f"{where}({shown}): {e.sentence}"
            error = type(e)(f"hookscope: {sentence}")
            for fact in ("kind", "options", "pieces"):
                if hasattr(e, fact):
                    setattr(error, fact, getattr(e, fact))
            error.sentence = sentence
            raise error from None
        except TypeError as e:
            if type(e) is not TypeError:  # the binding's own refusal (BindingTypeError), or ValueKindError
                raise
            values = given(args, kwargs)
            shown = ", ".join(f"{n}={_shown(v)}" for n, v in values.items())
            types = ", ".join(f"{n}: {type(v).__name__}" for n, v in values.items())
            raise TypeError(f"hookscope: {where}({', '.join(names)}): the arguments do not fit the parameters' "
                            f"types: got {types or 'no argument'} ({shown})") from None

    method.__name__, method.__qualname__, method.__doc__ = name, f"{owner}.{name}", fn.__doc__
    method.__hookscope_parameters__ = names  # type: ignore[attr-defined]
    return method
