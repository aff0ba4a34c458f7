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


class CacheReader(torch.nn.Module):
    """Reads a transformers cache as a model would: its tensors, whatever their layers keep beside them."""

    def forward(self, input_ids, cache=None):
        x = input_ids.float().sum()
        for leaf in pytree.tree_leaves(cache):
            if isinstance(leaf, torch.Tensor) and leaf.dim() == 4:
                x = x + leaf.sum()
        return x


def empty_cache(kind: str):
    configs = {
        "dynamic": T.LlamaConfig(**TEXT),
        # Mistral's default window: its layers are DynamicSlidingWindowLayer, empty ones keeping a 0-d tensor
        "sliding": T.MistralConfig(**TEXT),
        "sliding and full": T.Gemma3TextConfig(**TEXT, layer_types=["sliding_attention", "full_attention"]),
    }
    if kind == "encoder-decoder":
        config = T.LlamaConfig(**TEXT)
        return T.EncoderDecoderCache(T.DynamicCache(config=config), T.DynamicCache(config=config))
    return T.DynamicCache(config=configs[kind])


def fill(cache, batch: int, past: int, g):
    caches = [cache.self_attention_cache, cache.cross_attention_cache] if isinstance(cache, T.EncoderDecoderCache) \
        else [cache]
    for c in caches:
        for layer in range(len(c.layers)):
            kv = [torch.randn(batch, HEADS, past, HEAD_DIM, generator=g) for _ in range(2)]
            c.update(*kv, layer)
    return cache


KINDS = ["dynamic", "sliding", "sliding and full", "encoder-decoder"]


@pytest.mark.parametrize("empty_first", [True, False], ids=["empty first", "empty last"])
@pytest.mark.parametrize("kind", KINDS)
def test_an_empty_cache_of_every_layer_kind_gets_placeholders(kind, empty_first):
    model = CacheReader()
    register_cache_pytrees_for_model(model)
    g = torch.Generator().manual_seed(0)
    empty = [(2, 5), (3, 7)]
    filled = [(2, 5), (3, 7)]
    leaves = pytree.tree_leaves(empty_cache(kind))
    assert not [x for x in leaves if x.dim() > 0]  # no data; a sliding-window layer keeps its window, a 0-d tensor
    assert bool(leaves) == ("sliding" in kind)
    obs = InputObserver(store_n_calls=10)
    with obs(model):
        calls = [lambda b=b, s=s: model(torch.zeros(b, s, dtype=torch.int64), cache=empty_cache(kind))
                 for b, s in empty]
        calls += [lambda b=b, p=p: model(torch.zeros(b, 1, dtype=torch.int64), cache=fill(empty_cache(kind), b, p, g))
                  for b, p in filled]
        for call in (calls if empty_first else calls[2:] + calls[:2]):
            call()
    bundles = obs.phases(set_batch_dimension_for=True)
    prefill_calls = [0, 1] if empty_first else [2, 3]
    assert [(p.name, p.calls) for p in bundles] == sorted(
        [("prefill", prefill_calls), ("decode", [2, 3] if empty_first else [0, 1])], key=lambda x: x[1])
    for i, (b, _) in zip(prefill_calls, empty):
        args, kwargs = obs.infer_arguments(i, as_args_kwargs=True)
        cache = kwargs["cache"]
        assert type(cache) is type(empty_cache(kind))
        leaves = [x for x in pytree.tree_leaves(cache) if x.dim() == 4]
        assert leaves and all(tuple(x.shape) == (b, HEADS, 0, HEAD_DIM) for x in leaves)
    # New inputs of a batch never observed: the placeholder cache follows their batch.
    args, kwargs = obs.infer_arguments({"input_ids": torch.zeros(5, 4, dtype=torch.int64), "cache": empty_cache(kind)},
                                       as_args_kwargs=True)
    assert {tuple(x.shape) for x in pytree.tree_leaves(kwargs["cache"]) if x.dim() == 4} == {(5, HEADS, 0, HEAD_DIM)}


def test_a_struct_of_0d_tensors_in_every_call_is_an_input():
    """Only beside calls holding data is a value without any left out: a state of scalars is an input."""

    class Stepper(torch.nn.Module):
        def forward(self, x, state):
            return x * state[0] + state[1]

    model, obs = Stepper(), InputObserver()
    with obs(model):
        for n in (2, 3, 4):
            model(torch.ones(n, 3), (torch.tensor(2.0), torch.tensor(1.0)))
    (phase,) = obs.phases(set_batch_dimension_for=True)
    assert [tuple(t.shape) for t in phase.args[1]] == [(), ()]
    ep = phase.export(model)
    x, state = torch.randn(6, 3), (torch.tensor(3.0), torch.tensor(-1.0))
    torch.testing.assert_close(ep.module()(x, state), model(x, state))


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


# --- a list whose length follows the batch ----------------------------------------------------------------------------
class PerImage(torch.nn.Module):
    """LLaVA's pattern: the prefill gets one feature tensor per image (a list as long as the batch) and an empty
    cache, the decode steps the cache filled."""

    def forward(self, input_ids, features=None, past=()):
        h = input_ids.float().unsqueeze(-1).expand(-1, -1, 4)
        if features is not None:
            h = h + torch.stack(features).mean(1, keepdim=True)
        return (torch.cat([past[0], h], 1),) if past else (h,)


def per_image_calls(model, prompts, g):
    for b, s in prompts:
        features = [torch.randn(3, 4, generator=g) for _ in range(b)]
        past = model(input_ids=torch.zeros(b, s, dtype=torch.int64), features=features, past=())
        for _ in range(2):
            past = model(input_ids=torch.zeros(b, 1, dtype=torch.int64), past=past)


def test_a_list_whose_length_follows_the_batch_is_a_phase_per_length():
    model, g = PerImage(), torch.Generator().manual_seed(2)
    obs = InputObserver(store_n_calls=30)
    with obs(model):
        per_image_calls(model, [(2, 5), (3, 7), (2, 8), (3, 4)], g)
    with pytest.raises(hookscope.InferenceError,
                       match=r"Named argument 'features' has 3 tensors but previously got 2 tensors.* \(call 3\)"):
        obs.infer_dynamic_shapes()  # no program takes both lengths
    bundles = obs.phases()
    assert [(p.name, p.calls) for p in bundles] == [
        ("prefill (2 leaves in features)", [0, 6]), ("prefill (3 leaves in features)", [3, 9]),
        ("decode", [1, 2, 4, 5, 7, 8, 10, 11])]
    for phase in bundles:
        ep = phase.export(model)
        if phase.name == "decode":  # a batch and a cache length never observed
            kwargs = {"input_ids": torch.zeros(4, 1, dtype=torch.int64), "past": (torch.randn(4, 6, 4, generator=g),)}
        else:  # the phase's number of images, a prompt length never observed
            b = len(phase.kwargs["features"])
            kwargs = {"input_ids": torch.zeros(b, 10, dtype=torch.int64),
                      "features": [torch.randn(3, 4, generator=g) for _ in range(b)]}
        got = ep.module()(**phase.observer.infer_arguments(kwargs))
        torch.testing.assert_close(got, model(**kwargs))
    # A number of images never observed: no prefill's calls share its tree.
    new = {"input_ids": torch.zeros(4, 6, dtype=torch.int64), "features": [torch.randn(3, 4)] * 4, "past": ()}
    refusal = "Named argument 'features' has 4 tensors but previously got"
    for phase in bundles[:2]:
        with pytest.raises(hookscope.InferenceError, match=refusal), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            phase.observer.infer_arguments(new)
