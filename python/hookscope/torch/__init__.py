"""hookscope.torch: InputObserver for torch.nn.Module, on the compiled shape engine.

The API is the reference's (yobx's InputObserver, also shipped in onnx-diagnostic)::

    observer = InputObserver()
    with observer(model):
        model.generate(input_ids)
    ep = torch.export.export(model, (), kwargs=observer.infer_arguments(),
                             dynamic_shapes=observer.infer_dynamic_shapes())

Each call's inputs are flattened with torch's own pytree (``torch.utils._pytree``: tuples, lists, dicts and every
registered node, e.g. a transformers cache once registered) into the record format's value tree and handed to the
C++ engine (``hookscope._engine.ShapeEngine``), which decides which dimensions are dynamic, which arguments are
optional and which stored call is the representative one. Python keeps copies of the tensors of the stored calls
only (as the reference does), so that ``infer_arguments`` returns real observed tensors (placeholders for arguments a
call left out).
"""
from ._codec import DTYPES, to_value
from ._export import to_torch_dynamic_shapes, to_torch_tensorrt_inputs, to_torch_tensorrt_kwargs
from ._info import InputCandidate, InputObserverInfo
from ._observer import InputObserver
from ._phases import Phase
from ._sentences import NotImplementedInferenceError

__all__ = ["InputObserver", "InputObserverInfo", "InputCandidate", "Phase", "NotImplementedInferenceError", "to_value",
           "DTYPES", "to_torch_dynamic_shapes", "to_torch_tensorrt_kwargs", "to_torch_tensorrt_inputs"]
