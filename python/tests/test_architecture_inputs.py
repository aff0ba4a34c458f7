"""The inputs real architectures give (test_architectures.py runs the architectures), each with hostile variants: an
empty cache of every layer kind transformers has, ModelOutputs nested in tuples and dicts, a list whose length
follows the batch, placeholders for new inputs of a batch never observed."""
import copy
import warnings

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")
transformers = pytest.importorskip("transformers", reason="transformers is installed by tools/python_env.sh")
import torch.utils._pytree as pytree  # noqa: E402
from transformers.exporters.exporter_dynamo import register_cache_pytrees_for_model  # noqa: E402
from transformers.modeling_outputs import BaseModelOutput, BaseModelOutputWithPast  # noqa: E402

import hookscope  # noqa: E402
from hookscope.torch import InputObserver  # noqa: E402

T = transformers
HEADS, HEAD_DIM = 2, 8
TEXT = dict(hidden_size=16, intermediate_size=32, num_attention_heads=2, num_key_value_heads=HEADS, head_dim=HEAD_DIM,
            num_hidden_layers=2, vocab_size=50)


# --- ModelOutputs ----------------------------------------------------------------------------------------------------
class Consumer(torch.nn.Module):
    """An encoder's outputs given back as transformers gives them: a ModelOutput (an OrderedDict registered as a
    pytree node), alone, in a tuple, in a dict, with a field left None."""

    def forward(self, decoder_ids, encoder_outputs, pair, by_name):
        h = encoder_outputs.last_hidden_state
        h = h + pair[0].last_hidden_state * pair[1].float().mean()
        h = h + by_name["outputs"].last_hidden_state + by_name["outputs"].past_key_values
        return decoder_ids.float().unsqueeze(-1) + h.mean(1, keepdim=True)


def consumer_call(b, s, g):
    hidden = lambda: torch.randn(b, s, 4, generator=g)  # noqa: E731
    return (torch.randint(0, 9, (b, 1), generator=g), BaseModelOutput(last_hidden_state=hidden()),
            (BaseModelOutput(last_hidden_state=hidden(), hidden_states=None), torch.ones(b, s)),
            {"outputs": BaseModelOutputWithPast(last_hidden_state=hidden(), past_key_values=hidden())})


def test_model_outputs_nested_in_tuples_and_dicts_export_and_run_at_unseen_shapes():
    model, g = Consumer(), torch.Generator().manual_seed(1)
    obs = InputObserver()
    with obs(model):
        for b, s in ((2, 5), (3, 7), (4, 6)):
            model(*consumer_call(b, s, g))
    (phase,) = obs.phases(set_batch_dimension_for=True)
    _, enc, pair, by_name = phase.args
    assert type(enc) is BaseModelOutput and type(pair[0]) is BaseModelOutput
    assert type(by_name["outputs"]) is BaseModelOutputWithPast
    assert obs.needs_backed_size_oblivious() is False
    ep = phase.export(model)
    for b, s in ((5, 9), (2, 3)):
        call = consumer_call(b, s, g)
        torch.testing.assert_close(ep.module()(*copy.deepcopy(call)), model(*call))


