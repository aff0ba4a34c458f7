"""observer.phases(): one export bundle per phase (e.g. a decoder's prefill and decode steps), the phases being the
engine's (the split of tensorrt_profiles(phases=True): calls grouped by whether one dynamic dim is 1), each profile
naming the stored calls it covers (``call_indexes``). The observer is handed in: this module never imports it."""
from __future__ import annotations

import contextlib
import warnings
from typing import Any

import torch

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


def _phase_name(profile: dict, n_phases: int) -> str:
    """A decoder's phases by the dimension the engine split the calls on: decode (one new token), prefill."""
    split = profile["split"]
    if n_phases == 1 or split is None:
        return "all calls"
    if split["label"] == "sequence_length":
        return "decode" if split["equals_one"] else "prefill"
    return profile["phase"]


def _as_named(observer: Any, args: tuple, kwargs: dict, dynamic_shapes: Any) -> Any:
    """The arguments in the structure of the dynamic shapes (a dict by parameter name, or the positional tuple)."""
    if isinstance(dynamic_shapes, dict):
        return {**dict(zip(observer._names, args)), **kwargs}
    return args


def phases(observer: Any, set_batch_dimension_for=None, dim_names=None) -> list[Phase]:
    """observer.phases(...) of this InputObserver (its stored calls, and its subsets for the phases' bundles)."""
    engine = observer._check()
    profiles = engine.infer_dynamic_shapes(profile_phases=True).tensorrt_profiles
    out = []
    for profile in profiles:
        members = profile["call_indexes"]  # the stored calls of its phase, as the engine split them
        if not members:
            continue
        sub = observer._subset([observer._calls[i] for i in members])
        args, kwargs = sub.infer_arguments(as_args_kwargs=True, avoid_specialization=True)
        ds = sub.infer_dynamic_shapes(set_batch_dimension_for, dim_names)
        for w in sub.shape_warnings(set_batch_dimension_for, dim_names):
            if w.kind == "batch_dimension_unobserved":  # the user named it: say why it is static
                warnings.warn(InferenceWarning(f"{w} (phase {profile['phase']})", w.kind, w.input, w.dim,
                                               profile["phase"]), stacklevel=3)
        backed = sub.needs_backed_size_oblivious(_as_named(sub, args, kwargs, ds), ds)
        out.append(Phase(_phase_name(profile, len(profiles)), profile["phase"], members, sub, args,
                         kwargs, ds, backed))
    return out
