"""``InputObserver.info``: the stored calls as the reference InputObservers show them (yobx's, onnx-diagnostic's and
torch.onnx's ``InputObserverInfo`` and ``InputCandidate``), read from the observer each time it is asked."""
from __future__ import annotations

import abc
import inspect
from typing import Any

import torch
import torch.utils._pytree as _pytree

from .._arguments import count, mapping
from ._values import StoredCall

_SCALARS = (int, float, bool, str)


class Observer(abc.ABC):
    """What InputObserverInfo and InputCandidate take: ``hookscope.torch.InputObserver`` registers itself as one
    (``Observer.register``), so that this module, which the observer imports, need not import it."""


def _observer_arg(observer: Any) -> Any:
    if not isinstance(observer, Observer):
        raise TypeError(f"hookscope: observer: expected a hookscope.torch.InputObserver, got {type(observer).__name__}"
                        " (InputObserver.info builds this object)")
    return observer


def _shape_text(value: Any) -> str:
    """A short description of a value with its tensors' dtypes and shapes (the references' ``string_type``)."""
    if isinstance(value, torch.Tensor):
        return f"T{str(value.dtype).replace('torch.', '')}s{'x'.join(map(str, value.shape))}"
    if value is None:
        return "None"
    if isinstance(value, _SCALARS):
        return repr(value)
    if isinstance(value, dict):
        return "dict(" + ",".join(f"{k}:{_shape_text(v)}" for k, v in value.items()) + ")"
    if isinstance(value, (tuple, list)):
        inner = ",".join(_shape_text(v) for v in value)
        return f"#{len(value)}({inner})" if isinstance(value, tuple) else f"#{len(value)}[{inner}]"
    leaves = [_shape_text(t) for t in _pytree.tree_leaves(value)]
    return f"{type(value).__name__}[{','.join(leaves)}]"


class InputCandidate:
    """One stored call as the references' ``InputCandidate``: ``args``, ``kwargs`` (copies of the tensors given; None
    and scalar keyword arguments left out), ``cst_kwargs`` (scalar keyword arguments differing from a scalar
    default), ``flat_list`` and ``spec`` (torch's pytree of ``(args, kwargs)``), ``aligned_flat_list`` (the call's
    tensors aligned on the best candidate, None where the call left one out), ``len()`` (the number of leaves)."""

    def __init__(self, observer: Any, index: int, default_values: dict[str, Any]):
        _observer_arg(observer)
        if count("index", index) >= len(observer._calls):
            raise ValueError(f"hookscope: index: no stored call {index} ({len(observer._calls)} stored)")
        mapping("default_values", default_values, optional=False)
        args, given = observer._stored_inputs(index)
        self.index = index
        self.args = args
        self.kwargs = {k: v for k, v in given.items() if v is not None and not isinstance(v, _SCALARS)}
        self.cst_kwargs = {k: v for k, v in given.items()
                           if isinstance(v, _SCALARS) and default_values.get(k) is not None
                           and v != default_values.get(k)}
        leaves, self.spec = _pytree.tree_flatten((self.args, self.kwargs))
        self.flat_list = [t if isinstance(t, torch.Tensor) else None for t in leaves]
        self._observer = observer

    @property
    def aligned_flat_list(self) -> list[torch.Tensor | None]:
        aligned = self._observer.engine_info["calls"][self.index]["aligned"]
        tensors = self._observer.infer_arguments(self.index, flat=True)
        if len(tensors) != len(aligned):  # a leaf that is not a tensor: the engine's alignment holds it too
            return list(tensors)
        return [None if a is None else t for a, t in zip(aligned, tensors)]

    @property
    def aligned_spec(self):
        args, kwargs = self._observer.infer_arguments(self.index, as_args_kwargs=True)
        return _pytree.tree_flatten((args, kwargs))[1]

    @property
    def n_tensors_for_args_kwargs(self) -> dict[int | str, int]:
        """The number of flattened leaves of each positional argument (by position) and keyword argument (by name)."""
        sizes: dict[int | str, int] = {i: len(_pytree.tree_leaves(a)) for i, a in enumerate(self.args)}
        sizes.update({k: len(_pytree.tree_leaves(v)) for k, v in self.kwargs.items()})
        return sizes

    @property
    def position_to_args_kwargs(self) -> list[int | str]:
        """For each leaf of flat_list, the position or name of the argument holding it."""
        return [k for k, n in self.n_tensors_for_args_kwargs.items() for _ in range(n)]

    @property
    def n_aligned_tensors(self) -> int:
        return len(self.aligned_flat_list)

    def __len__(self) -> int:
        return len(self.flat_list)

    def __str__(self) -> str:
        return (f"InputCandidate({len(self.args)} args, {len(self.kwargs)} kwargs, {len(self.flat_list)} tensors, "
                f"{len(self.aligned_flat_list)} aligned tensors)")

    def str_obs(self) -> str:
        return (f"InputCandidate(args={_shape_text(self.args)}, kwargs={_shape_text(self.kwargs)}, "
                f"cst_kwargs={self.cst_kwargs})")


class InputObserverInfo:
    """What the observer stored, as the references' ``InputObserverInfo``: ``len(info)`` stored calls, ``inputs``
    (one InputCandidate each), ``flat_outputs`` (each call's result flattened by torch's pytree, copied; None where
    the call raised), ``outputs_specs``, ``latencies`` (seconds; None where the call raised), ``signature_names``,
    ``default_values`` (scalar defaults), ``value_if_missing``, ``args_name_and_position`` (``*args``' name and
    position or None), ``kwargs_name`` (``**kwargs``' name or None)."""

    def __init__(self, observer: Any):
        self._observer = _observer_arg(observer)
        # The inputs remove_inputs removed are left out, as the references' info forgets them.
        parameters = [p for p in observer._parameters or [] if p.name not in observer._removed]
        self.signature_names = [p.name for p in parameters]
        self.default_values = {p.name: p.default for p in parameters
                               if p.default is not inspect.Parameter.empty and isinstance(p.default, _SCALARS)}
        self.value_if_missing = observer.value_if_missing
        self.args_name_and_position = next(((p.name, i) for i, p in enumerate(parameters)
                                            if p.kind == inspect.Parameter.VAR_POSITIONAL), None)
        self.kwargs_name = next((p.name for p in parameters if p.kind == inspect.Parameter.VAR_KEYWORD), None)
        calls: list[StoredCall] = observer._calls
        self.flat_outputs = [c.flat_outputs for c in calls]
        self.outputs_specs = [c.outputs_spec for c in calls]
        self.latencies = [c.latency for c in calls]
        self._inputs: list[InputCandidate] | None = None

    @property
    def inputs(self) -> list[InputCandidate]:
        if self._inputs is None:
            self._inputs = [InputCandidate(self._observer, i, self.default_values)
                            for i in range(len(self._observer._calls))]
        return self._inputs

    def __len__(self) -> int:
        return len(self._observer._calls)

    def __repr__(self) -> str:
        return f"InputObserverInfo({len(self)} stored calls, signature ({', '.join(self.signature_names)}))"
