"""observer.phases(): one export bundle per phase, exported with torch.export as given and run at observed and
unobserved shapes of its phase against the eager model: a transformers decoder with DynamicCache, a vision-language
pattern (an image at the prefill only, a registered custom cache afterwards) and an encoder (one phase)."""
import copy
import random
import warnings

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")
import torch.utils._pytree as pytree  # noqa: E402

from helpers import prompts  # noqa: E402
from hookscope.torch import InputObserver, Phase  # noqa: E402

HEADS, HEAD_DIM = 2, 8


def dynamic_dims(ds):
    """(path, dim) of every dynamic dim of a dynamic_shapes structure."""
    out = []

    def walk(spec, path):
        if isinstance(spec, dict) and all(isinstance(k, int) for k in spec):
            out.extend((path, d) for d in spec)
        elif isinstance(spec, dict):
            for k, v in spec.items():
                walk(v, path + (k,))
        elif isinstance(spec, (list, tuple)):
            for i, v in enumerate(spec):
                walk(v, path + (i,))
    walk(ds, ())
    return out


# --- (a) a transformers decoder with DynamicCache ------------------------------------------------------------------
def llama_inputs(cache_like, b, s, p, g):
    leaves, spec = pytree.tree_flatten(cache_like)
    cache = pytree.tree_unflatten([torch.randn(b, HEADS, p, HEAD_DIM, generator=g) for _ in leaves], spec)
    return {"input_ids": torch.randint(0, 100, (b, s), generator=g),
            "position_ids": torch.arange(p, p + s).expand(b, s), "cache": cache, "logits_to_keep": 1}


def test_decoder_with_dynamic_cache(tiny_llama_cached):
    obs = InputObserver()
    for ids in prompts():
        with obs(tiny_llama_cached):
            tiny_llama_cached.generate(ids, max_new_tokens=3, do_sample=False)
    bundles = obs.phases(set_batch_dimension_for=True)
    assert [p.name for p in bundles] == ["prefill", "decode"]
    assert [p.calls for p in bundles] == [[0, 3], [1, 2, 4, 5]]
    assert all(isinstance(p, Phase) for p in bundles)
    prefill, decode = bundles
    assert not prefill.backed_size_oblivious  # past length 0 in every prefill: static, not dynamic
    assert not decode.backed_size_oblivious
    g = torch.Generator().manual_seed(3)
    for phase, shapes in ((prefill, [(2, 5, 0), (3, 7, 0), (4, 6, 0), (2, 9, 0)]),
                          (decode, [(2, 1, 5), (3, 1, 8), (4, 1, 12), (5, 1, 6)])):
        ep = phase.export(tiny_llama_cached)
        cache_like = phase.kwargs["cache"]
        for b, s, p in shapes:  # observed, then a batch and lengths never seen
            kwargs = llama_inputs(cache_like, b, s, p, g)
            with torch.no_grad():
                expected = tiny_llama_cached(**copy.deepcopy(kwargs))
                got = ep.module()(**copy.deepcopy(kwargs))
            torch.testing.assert_close(got.logits, expected.logits)
            for x, y in zip(pytree.tree_leaves(got.past_key_values), pytree.tree_leaves(expected.past_key_values)):
                torch.testing.assert_close(x, y)


# --- (b) a vision-language pattern ---------------------------------------------------------------------------------
class ImageCache:
    def __init__(self, key, value):
        self.key, self.value = key, value


pytree.register_pytree_node(
    ImageCache, lambda c: ([c.key, c.value], None), lambda xs, _: ImageCache(*xs),
    flatten_with_keys_fn=lambda c: ([(pytree.GetAttrKey("key"), c.key), (pytree.GetAttrKey("value"), c.value)], None))


class TinyVLM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(50, 8)
        self.image = torch.nn.Linear(3 * 4 * 4, 8)

    def forward(self, input_ids, pixel_values=None, past_key_values=None):
        h = self.embed(input_ids)
        if pixel_values is not None and pixel_values.shape[0] > 0:
            h = h + self.image(pixel_values.flatten(1)).unsqueeze(1)
        if past_key_values is not None:
            k = torch.cat([past_key_values.key, h], 1)
            v = torch.cat([past_key_values.value, h * 2], 1)
        else:
            k, v = h, h * 2
        logits = h @ k.transpose(1, 2) @ v
        return logits, ImageCache(k, v)


def vlm_generate(model, b, n, steps, g):
    out, cache = model(torch.randint(0, 50, (b, n), generator=g), pixel_values=torch.randn(b, 3, 4, 4, generator=g))
    for _ in range(steps):
        out, cache = model(torch.randint(0, 50, (b, 1), generator=g), past_key_values=cache)


def test_vision_language_image_at_the_prefill():
    torch.manual_seed(0)
    model = TinyVLM().eval()
    obs = InputObserver(value_if_missing={"pixel_values": torch.empty((0, 3, 4, 4))}, store_n_calls=20)
    g = torch.Generator().manual_seed(1)
    with obs(model):
        vlm_generate(model, 2, 5, 3, g)
        vlm_generate(model, 3, 7, 3, g)
    bundles = obs.phases(set_batch_dimension_for=True)
    assert [p.name for p in bundles] == ["prefill", "decode"]
    prefill, decode = bundles
    assert decode.dynamic_shapes["pixel_values"] == {}  # only its placeholder in every decode call: no batch dim
    named = obs.phases(set_batch_dimension_for=True, dim_names=True)[1].dynamic_shapes
    assert all(spec[0] is named["input_ids"][0] for spec in named["past_key_values"])  # one batch Dim
    ep = prefill.export(model)
    for b, n in ((2, 5), (3, 7), (4, 9), (5, 2)):
        ids, px = torch.randint(0, 50, (b, n), generator=g), torch.randn(b, 3, 4, 4, generator=g)
        for x, y in zip(pytree.tree_leaves(ep.module()(ids, pixel_values=px)),
                        pytree.tree_leaves(model(ids, pixel_values=px))):
            torch.testing.assert_close(x, y)
    for dims in (named, None):
        ep = (decode if dims is None else obs.phases(set_batch_dimension_for=True, dim_names=True)[1]).export(model)
        for b, past in ((2, 5), (3, 9), (4, 12), (6, 3)):
            ids = torch.randint(0, 50, (b, 1), generator=g)
            cache = ImageCache(torch.randn(b, past, 8, generator=g), torch.randn(b, past, 8, generator=g))
            empty = torch.empty((0, 3, 4, 4))
            got = ep.module()(ids, pixel_values=empty, past_key_values=cache)
            for x, y in zip(pytree.tree_leaves(got), pytree.tree_leaves(model(ids, past_key_values=cache))):
                torch.testing.assert_close(x, y)


# --- (c) an encoder: one phase -------------------------------------------------------------------------------------
def test_encoder_one_phase():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=16, nhead=2, dim_feedforward=32, batch_first=True, dropout=0.0)

    class Encoder(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.embed, self.layer = torch.nn.Embedding(30, 16), layer

        def forward(self, input_ids, attention_mask):
            return self.layer(self.embed(input_ids), src_key_padding_mask=attention_mask == 0)

    model = Encoder().eval()
    obs = InputObserver()
    g = torch.Generator().manual_seed(2)
    with obs(model), torch.no_grad():
        for b, s in ((2, 5), (3, 8), (4, 6)):
            model(torch.randint(0, 30, (b, s), generator=g), torch.ones(b, s, dtype=torch.int64))
    (phase,) = obs.phases(set_batch_dimension_for=True)
    assert phase.name == "all calls" and phase.calls == [0, 1, 2]
    ep = phase.export(model)
    for b, s in ((2, 5), (3, 8), (5, 11), (7, 3)):
        ids, mask = torch.randint(0, 30, (b, s), generator=g), torch.ones(b, s, dtype=torch.int64)
        with torch.no_grad():
            torch.testing.assert_close(ep.module()(ids, mask), model(ids, mask))


# --- property: random selections of a synthetic decoder ------------------------------------------------------------
class Synthetic(torch.nn.Module):
    def forward(self, input_ids, past=None):
        x = input_ids.float().unsqueeze(-1)
        return x if past is None else torch.cat([past, x], 1)


@pytest.mark.parametrize("seed", range(6))
def test_property_every_bundle_exports_or_the_engine_says_why(seed):
    rnd = random.Random(seed)
    model, obs = Synthetic(), InputObserver(store_n_calls=100)
    with obs(model):
        for _ in range(rnd.randint(1, 3)):
            b, past = rnd.randint(1, 4), None
            for _ in range(rnd.randint(0, 3) + 1):
                s = rnd.randint(2, 6) if past is None else 1
                past = model(torch.zeros(b, s, dtype=torch.int64), past)
    batch = rnd.choice([None, True, {"input_ids"}, {"input_ids", "past"}])
    try:
        bundles = obs.phases(set_batch_dimension_for=batch)
    except ValueError as e:  # the engine refuses these calls, with its reason
        assert str(e).startswith("hookscope:")
        return
    assert sorted(i for p in bundles for i in p.calls) == list(range(obs.num_obs))
    for p in bundles:
        for path, d in dynamic_dims(p.dynamic_shapes):
            # A dynamic dim varies within the phase, or is the batch dim of an input some call of it gives.
            position = path[0] if isinstance(path[0], int) else obs._names.index(path[0])
            given = [obs._calls[i].snapshot[0][position] for i in p.calls]
            values = {t.shape[d] for t in given if isinstance(t, torch.Tensor)}
            forced = batch is True or (batch is not None and obs._names[position] in batch)
            assert len(values) > 1 or (d == 0 and forced and values), (p, path, d, values)
        try:
            p.export(model)
        except Exception as e:  # torch's reason, e.g. a dim that takes one value in the chosen call
            assert str(e)


# --- hostile inputs ------------------------------------------------------------------------------------------------
def test_hostile_phases():
    model = Synthetic()
    # a phase with a single call, every call batch 1
    obs = InputObserver()
    with obs(model):
        model(torch.zeros(1, 4, dtype=torch.int64))
    (p,) = obs.phases(set_batch_dimension_for=True)
    assert p.calls == [0] and p.backed_size_oblivious  # batch 1 forced dynamic
    p.export(model)
    # every call of both phases has batch 1: the forced batch dim is 1 in the chosen arguments
    obs = InputObserver(store_n_calls=10)
    with obs(model):
        for n in (4, 6):
            past = model(torch.zeros(1, n, dtype=torch.int64))
            for _ in range(2):
                past = model(torch.zeros(1, 1, dtype=torch.int64), past)
    bundles = obs.phases(set_batch_dimension_for=True)
    assert [(p.name, p.calls) for p in bundles] == [("prefill", [0, 3]), ("decode", [1, 2, 4, 5])]
    for p in bundles:
        assert p.backed_size_oblivious
        ep = p.export(model)
        x = torch.zeros(3, 5 if p.name == "prefill" else 1, dtype=torch.int64)  # a batch and a length never seen
        given = (x,) if p.name == "prefill" else (x, torch.ones(3, 7, 1))
        torch.testing.assert_close(ep.module()(*given), model(*given))
    # an input only ever a placeholder, named explicitly: a warning, no dynamic dim
    obs = InputObserver(value_if_missing={"past": torch.empty((0, 0, 1))})
    with obs(model):
        model(torch.zeros(2, 3, dtype=torch.int64))
        model(torch.zeros(3, 4, dtype=torch.int64))
    with pytest.warns(UserWarning, match="asked for 'past', which every call gave only as its value_if_missing"):
        (p,) = obs.phases(set_batch_dimension_for={"past", "input_ids"})
    assert p.dynamic_shapes["past"] == {}
    # an empty observer or selection: a clear error
    with pytest.raises(RuntimeError, match=r"^hookscope: No inputs were captured\."):
        InputObserver().phases()
    with pytest.raises(ValueError, match="holds for no stored call"):
        obs.select(lambda a, kw: False)
    # clashing dim_names labels: kept, the engine warns
    with warnings.catch_warnings(record=True):
        bundles = obs.phases(dim_names={"input_ids": {0: "n", 1: "n"}})
    assert bundles[0].dynamic_shapes["input_ids"][0] is bundles[0].dynamic_shapes["input_ids"][1]
