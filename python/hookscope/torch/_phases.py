"""observer.phases(): one export bundle per phase (e.g. a decoder's prefill and decode steps), the phases being the
engine's (the split of tensorrt_profiles(phases=True): calls grouped by whether one dynamic dim is 1, then by whether
one is 0, an input left out), each profile naming the stored calls it covers (``call_indexes``). The observer is
handed in: this module never imports it."""
from __future__ import annotations

import contextlib
import warnings
from typing import Any

import torch
import torch.utils._pytree as _pytree

from .. import _engine
from .._errors import InferenceWarning


class Phase:
    """One phase's export bundle: ``torch.export.export(model, args, kwargs, dynamic_shapes=dynamic_shapes)``, under
    ``torch.fx.experimental._config.patch(backed_size_oblivious=True)`` when ``backed_size_oblivious`` (a dynamic dim
    is 0 or 1 in the chosen arguments). ``calls``: the indexes of the observer's stored calls the phase covers;
    ``split``: the engine's name of the phase (``sequence_length = 1``, ``all calls``); ``observer``: an observer
    holding those calls only (``observer.select`` of them)."""

    def __init__(self, name: str, split: str, calls: list[int], observer: Any, args: tuple,
                 kwargs: dict, dynamic_shapes: Any, backed_size_oblivious: bool):
        self.name, self.split, self.calls, self.observer = name, split, calls, observer
        self.args, self.kwargs, self.dynamic_shapes = args, kwargs, dynamic_shapes
        self.backed_size_oblivious = backed_size_oblivious

    def export(self, model: torch.nn.Module, **kw) -> torch.export.ExportedProgram:
        """torch.export.export of the model with this phase's arguments and dynamic shapes; ``kw`` goes to it."""
        patch = contextlib.nullcontext()
        if self.backed_size_oblivious:
            from torch.fx.experimental import _config as fx_config
            patch = fx_config.patch(backed_size_oblivious=True)
        with patch:
            return torch.export.export(model, self.args, self.kwargs, dynamic_shapes=self.dynamic_shapes, **kw)

    def __repr__(self) -> str:
        return f"Phase({self.name!r}, calls={self.calls}, backed_size_oblivious={self.backed_size_oblivious})"


# The words of the engine's splits on the well-known dims: a decoder's decode steps take one new token
# (sequence_length = 1) after a cache that holds some (past_sequence_length > 0); its prefill a prompt, its cache
# empty (an encoder-decoder's first step takes one token too: the split on past_sequence_length = 0 names it).
_WORDS = {("sequence_length", 1, True): "decode", ("sequence_length", 1, False): "prefill",
          ("past_sequence_length", 0, True): "prefill", ("past_sequence_length", 0, False): "decode"}


def _split_words(split: dict) -> str | None:
    """A split's words, None where only the engine's text says it (a dim other than sequence_length being 1)."""
    word = _WORDS.get((split["label"], split["value"], split["equal"]))
    if word is None and split["value"] == 0:  # at 0 the input holds nothing: these calls left it out
        argument = split["input"].split(".")[0]
        word = f"without {argument}" if split["equal"] else f"with {argument}"
    return word


def _phase_names(profiles: list[dict]) -> list[str]:
    """Each phase named by its splits' words ("prefill", "decode", "prefill without pixel_values"). A phase whose
    words say both prefill and decode (a prompt of length 1: one token, its cache empty), or that a split without
    words separates, or whose name another phase has, is named by the engine's text of its splits."""
    if len(profiles) == 1:
        return ["all calls"]
    names = []
    for p in profiles:
        words: list[str | None] = []
        for split in p["splits"]:
            w = _split_words(split)
            if w not in words:
                words.append(w)
        clear = None not in words and not {"prefill", "decode"} <= set(words)
        names.append(" ".join(words) if clear else p["phase"])
    return [p["phase"] if names.count(n) > 1 else n for p, n in zip(profiles, names)]


def _as_named(observer: Any, args: tuple, kwargs: dict, dynamic_shapes: Any) -> Any:
    """The arguments in the structure of the dynamic shapes (a dict by parameter name, or the positional tuple)."""
    if isinstance(dynamic_shapes, dict):
        return {**dict(zip(observer._names, args)), **kwargs}
    return args


def _leaf_counts(observer: Any, i: int) -> dict[str, int]:
    """Per argument of stored call i, the leaves it flattens to where it holds a tensor with a dimension, else 0 (left
    out, None, an empty cache: what the engine fills with placeholders)."""
    args, kwargs = observer._stored_inputs(i)
    names = observer._names
    by_name = {**{names[j] if j < len(names) else f"*args[{j}]": a for j, a in enumerate(args)}, **kwargs}
    out = {}
    for name, value in by_name.items():
        leaves = _pytree.tree_leaves(value)
        out[name] = len(leaves) if any(isinstance(x, torch.Tensor) and x.dim() > 0 for x in leaves) else 0
    return out


def _by_structure(observer: Any, set_batch_dimension_for, dim_names) -> list[Phase] | None:
    """Phases of calls in which an argument flattens to different numbers of leaves with data (LLaVA's list of one
    tensor per image, whose length follows the batch): torch.export fixes an input's tree, so no program takes both,
    and the engine refuses them together. The phases are split on the other arguments, then each by those
    arguments' counts (a call leaving one out counts 0), so that every bundle's calls share one tree; a phase so
    divided is named with its counts. None when no count differs."""
    counts = [_leaf_counts(observer, i) for i in range(len(observer._calls))]
    names = sorted({n for c in counts for n in c})
    differing = [n for n in names if len({c.get(n, 0) for c in counts} - {0}) > 1]
    if not differing or len(differing) == len(names):
        return None
    base = observer._subset(list(observer._calls))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base.remove_inputs(differing)
    try:
        profiles = base._check().infer_dynamic_shapes(profile_phases=True).tensorrt_profiles
    except _engine.InferenceError:
        return None
    index = {id(c): k for k, c in enumerate(observer._calls)}
    out = []
    for profile, name in zip(profiles, _phase_names(profiles)):
        groups: dict[tuple, list[int]] = {}
        for i in (index[id(base._calls[j])] for j in profile["call_indexes"]):
            groups.setdefault(tuple(counts[i].get(n, 0) for n in differing), []).append(i)
        for key, members in groups.items():
            counted = ", ".join(f"{n} leaves in {arg}" for arg, n in zip(differing, key) if n) or "none"
            out.append(_bundle(observer, name if len(groups) == 1 else f"{name} ({counted})", profile["phase"],
                               members, set_batch_dimension_for, dim_names))
    return out


def _bundle(observer: Any, name: str, split: str, members: list[int], set_batch_dimension_for,
            dim_names) -> Phase:
    """The bundle of one phase: these stored calls' observer, its representative arguments and dynamic shapes."""
    sub = observer._subset([observer._calls[i] for i in members])
    args, kwargs = sub.infer_arguments(as_args_kwargs=True, avoid_specialization=True)
    ds = sub.infer_dynamic_shapes(set_batch_dimension_for, dim_names)
    for w in sub.shape_warnings(set_batch_dimension_for, dim_names):
        if w.kind == "batch_dimension_unobserved":  # the user named it: say why it is static
            warnings.warn(InferenceWarning(f"{w} (phase {split})", w.kind, w.input, w.dim, split), stacklevel=4)
    backed = sub.needs_backed_size_oblivious(_as_named(sub, args, kwargs, ds), ds)
    return Phase(name, split, members, sub, args, kwargs, ds, backed)


def phases(observer: Any, set_batch_dimension_for=None, dim_names=None) -> list[Phase]:
    """observer.phases(...) of this InputObserver (its stored calls, and its subsets for the phases' bundles)."""
    engine = observer._check()
    try:
        profiles = engine.infer_dynamic_shapes(profile_phases=True).tensorrt_profiles
    except _engine.InferenceError:
        grouped = _by_structure(observer, set_batch_dimension_for, dim_names)
        if grouped is None:
            raise
        return grouped
    out = []
    for profile, name in zip(profiles, _phase_names(profiles)):
        members = profile["call_indexes"]  # the stored calls of its phase, as the engine split them
        if members:
            out.append(_bundle(observer, name, profile["phase"], members, set_batch_dimension_for, dim_names))
    return out
