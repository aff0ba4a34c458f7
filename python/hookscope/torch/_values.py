"""A recorded call's values on the observer's hot path: its arguments flattened once into leaves and a structure key,
the record encoding of that structure looked up by key (``_codec``'s template, built once per key), the leaves copied
for a call that is stored, what the observer keeps of a stored call, and the objects rebuilt from key, leaves and
registered nodes' contexts with their exact types. How a value is encoded is ``_codec``'s job, not this module's.
"""
from __future__ import annotations

import json
from typing import Any, Callable

import torch
import torch.utils._pytree as _pytree

from .. import _engine
from ._codec import SCALARS, Template, Unrecordable, build_template, join_templates, node_names

_NONE = "N"
_Tensor = torch.Tensor
NO_RESULT = object()  # a call that raised has no result
_MAX_TEMPLATES = 1024  # structures whose encoding is kept


def _hashable(context):
    """A registered node's context as part of a structure key; None when it cannot be hashed (the node's field names
    then stand for it)."""
    try:
        hash(context)
        return context
    except TypeError:
        pass
    if isinstance(context, (list, tuple)):
        items = [_hashable(c) for c in context]
        if all(i is not None or c is None for i, c in zip(items, context)):
            return ("list", tuple(items))
    return None


def flatten(obj: Any, leaves: list, contexts: list) -> Any:
    """obj's structure key (hashable; equal keys have equal encodings but for the tensors' shapes, and rebuild the
    same types: it holds the tensors' dtypes and the scalars' values); its leaves and its registered nodes' contexts
    are appended in pytree order."""
    t = type(obj)
    if t is _Tensor or isinstance(obj, _Tensor):
        leaves.append(obj)
        return obj.dtype
    if obj is None:
        return _NONE
    if t in SCALARS:
        leaves.append(obj)
        return (t, repr(obj) if t is float else obj)  # a float by its text: -0.0 == 0.0, nan != nan
    if t is tuple or t is list:
        return (t, _flatten_items(obj, leaves, contexts))
    if t is dict:  # the keys' types too: 1 and True are equal keys of a tuple, but rebuild differently
        return (dict, tuple(obj), tuple(map(type, obj)), _flatten_items(obj.values(), leaves, contexts))
    node_type = _pytree._get_node_type(obj)
    node = _pytree.SUPPORTED_NODES.get(node_type)
    if node is None:
        if isinstance(obj, SCALARS):  # an IntEnum, a str subclass: a leaf, rebuilt as itself
            leaves.append(obj)
            return (t, repr(obj))
        raise Unrecordable(f"cannot record a value of type {t.__qualname__}", "?")
    children, context = node.flatten_fn(obj)
    contexts.append(context)
    ck = _hashable(context)
    if ck is None:  # the field names decide the encoding
        ck = ("names", tuple(node_names(node, obj, len(children))))
    return (node_type, t, ck, _flatten_items(children, leaves, contexts))


def flatten_call(args: tuple, kwargs: dict, leaves: list, contexts: list) -> Any:
    """flatten((args, kwargs), ...) without the walk's outer levels (the recording path's hot spot)."""
    return (tuple, (
        (tuple, _flatten_items(args, leaves, contexts)),
        (dict, tuple(kwargs), tuple(map(type, kwargs)), _flatten_items(kwargs.values(), leaves, contexts))))


def _flatten_items(items, leaves: list, contexts: list) -> tuple:
    """The keys of a container's items, its plain tensors and Nones handled here (most leaves: no call each)."""
    keys = []
    for x in items:
        if type(x) is _Tensor:
            leaves.append(x)
            keys.append(x.dtype)
        elif x is None:
            keys.append(_NONE)
        else:
            keys.append(flatten(x, leaves, contexts))
    return tuple(keys)


def rebuild(key: Any, leaves, contexts) -> Any:
    """The object a structure key describes, from iterators over its leaves and contexts (exact types)."""
    if key is _NONE:
        return None
    if type(key) is torch.dtype:
        return next(leaves)
    kind = key[0]
    if len(key) == 2 and type(kind) is type and kind not in (tuple, list):  # a scalar
        return next(leaves)
    if kind is tuple:
        return tuple([rebuild(k, leaves, contexts) for k in key[1]])
    if kind is list:
        return [rebuild(k, leaves, contexts) for k in key[1]]
    if kind is dict:
        return {k: rebuild(sub, leaves, contexts) for k, sub in zip(key[1], key[3])}
    node_type, t, _, children = key
    context = next(contexts)
    values = [rebuild(k, leaves, contexts) for k in children]
    if t is torch.Size:  # torch's own unflatten gives a tuple, which lacks numel() and the rest
        return torch.Size(values)
    return _pytree.SUPPORTED_NODES[node_type].unflatten_fn(values, context)


def materialize(key: Any, leaves: list, contexts: list) -> Any:
    return rebuild(key, iter(leaves), iter(contexts))


def copy_leaves(leaves: list) -> list:
    """The leaves with their tensors copied (detached clones): a later in-place update must not change them, and
    torch.export guards on a view's base (`x._base.size()`), which a tensor the exported program is later given
    lacks."""
    return [(x.detach().clone() if x.requires_grad else x.clone()) if isinstance(x, torch.Tensor) else x
            for x in leaves]


# --- the encodings of the structures met, by structure key --------------------------------------------------------
def inputs_template(args: tuple, kwargs: dict, key: Any, templates: dict, structs: dict) -> Template:
    """The template of a call's inputs whose structure key is ``key``: from ``templates`` (structure key ->
    Template), else built and kept there; ``structs`` receives the registered nodes met (``build_template``)."""
    template = templates.get(key)
    if template is None:
        template = build_template((args, kwargs), "inputs", structs, call=True)
        if len(templates) >= _MAX_TEMPLATES:  # scalars are in the keys: a counter would grow it forever
            templates.clear()
        templates[key] = template
    return template


def line_template(template: Template, result: Any,
                  on_error: Callable[[Exception], None]) -> tuple[Template, Recorded | None]:
    """(the record line's template for these inputs and this result, the result flattened or None). A result that
    cannot be recorded is left out of the line: ``on_error`` is told why."""
    outputs = None
    rkey = None
    if result is not NO_RESULT:
        try:
            leaves: list = []
            contexts: list = []
            if type(result) is torch.Tensor:  # the common result, without the walk
                leaves.append(result)
                rkey = result.dtype
            else:
                rkey = flatten(result, leaves, contexts)
            line = template.lines.get(rkey)
            if line is None:
                line = join_templates(template, build_template(result, "result"))
            outputs = Recorded(rkey, copy_leaves(leaves), contexts)
        except Exception as e:
            on_error(e)
            rkey, outputs = NO_RESULT, None
    else:
        rkey = NO_RESULT
    if outputs is None:
        line = template.lines.get(NO_RESULT)
        if line is None:
            line = join_templates(template, None)
    if line.compiled is None:
        line.compiled = _engine.CallTemplate(line.fill([()] * len(line.dtypes)))
        template.lines[rkey] = line
    return line, outputs


# --- what the observer keeps of a stored call -------------------------------------------------------------------
class Recorded:
    """A structure's flattened form: its key, leaves (tensors copied once stored) and registered nodes' contexts."""

    __slots__ = ("key", "leaves", "contexts")

    def __init__(self, key, leaves: list, contexts: list):
        self.key, self.leaves, self.contexts = key, leaves, contexts

    def materialize(self):
        return materialize(self.key, self.leaves, self.contexts)


class StoredCall:
    """One call the engine stored: its record encoding (``call_json``, ``call``), its inputs (copied tensors, rebuilt
    with their exact types: ``snapshot`` is (args list, kwargs dict), what infer_arguments returns), its outputs as
    torch's pytree flattens them (copied; None where the call raised) with their spec, and the latency of the observed
    method in seconds (None where the call raised). The inputs and outputs are kept flat and rebuilt on demand."""

    __slots__ = ("line", "shapes", "inputs", "outputs", "latency")

    def __init__(self, line, shapes: list, inputs: Recorded, outputs: Recorded | None, latency: float | None):
        self.line, self.shapes, self.inputs, self.outputs, self.latency = line, shapes, inputs, outputs, latency

    @property
    def call_json(self) -> str:
        return self.line.fill(self.shapes)

    @property
    def call(self) -> dict:
        return json.loads(self.call_json)

    @property
    def snapshot(self) -> tuple[list, dict]:
        args, kwargs = self.inputs.materialize()
        return list(args), kwargs

    @property
    def flat_outputs(self) -> list | None:
        return None if self.outputs is None else _pytree.tree_leaves(self.outputs.materialize())

    @property
    def outputs_spec(self):
        return None if self.outputs is None else _pytree.tree_structure(self.outputs.materialize())
