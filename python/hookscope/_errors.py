"""The library's refusals and warnings as Python shows them, from their facts: a refusal's options spelled as the
front end's keywords (the library names them by its own option names, and each refusal of options carries them as
``options``, its sentence as ``pieces``), and each warning of an inference a ``str`` carrying its kind and fields.
Nothing here reads the words of a message."""
from __future__ import annotations

from collections.abc import Mapping

from . import _engine

# How hookscope's functions (infer, infer_arguments, load, summarize) spell the library's options: the binding's
# table, which also spells the warnings of the load.
FRONT_DOOR_KEYWORDS: Mapping[str, str] = _engine.front_door_keywords()


def spelled(error: BaseException, keywords: Mapping[str, str]) -> BaseException:
    """``error`` itself when it names no option; otherwise the same refusal (type, ``kind``, ``pieces``) whose
    sentence and ``options`` spell each option as ``keywords`` does (an option not there as the library names it)."""
    pieces = getattr(error, "pieces", None)
    if not pieces:
        return error
    sentence = "".join(text if option is None else keywords.get(option, option) for text, option in pieces)
    respelled = type(error)(f"hookscope: {sentence}")
    respelled.kind, respelled.pieces, respelled.sentence = getattr(error, "kind", None), pieces, sentence
    respelled.options = tuple(keywords.get(o, o) for o in error.options)
    return respelled


class InferenceWarning(str):
    """A warning of an inference: its message (a ``str``, ``hookscope: ...``) with what it is about as data:
    ``kind`` (e.g. ``"batch_dimension_unobserved"``, ``"dim_seen_below_two"``; docs/python.md lists them),
    ``input`` ("" when none), ``dim`` (None when none) and ``phase`` (the TensorRT profile's, "" when none)."""

    __slots__ = ("kind", "input", "dim", "phase")

    def __new__(cls, text: str, kind: str, input: str = "", dim: int | None = None, phase: str = ""):
        self = super().__new__(cls, text)
        self.kind, self.input, self.dim, self.phase = kind, input, dim, phase
        return self

    def __reduce__(self):
        return (type(self), (str(self), self.kind, self.input, self.dim, self.phase))
