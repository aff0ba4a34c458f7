"""A vision-language variant: an image only at the first step (prefill), a KV cache afterwards.

A small custom module with the call pattern of a llava-style VLM (transformers' VLM classes need a vision tower
config and processor conventions that make a tiny one mostly boilerplate): the prefill gets ``pixel_values`` (one
image per sequence) and input_ids whose first IMAGE_TOKENS tokens are image placeholders, replaced by the image's
patch embeddings (masked_scatter); the decode steps get ``pixel_values=None`` and ``past_key_values``, a tuple of
(key, value). ``value_if_missing`` gives the missing image as an empty batch (the reference's recipe), which the model
handles in the same graph (no image token, nothing scattered)."""
import copy
import math

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")
from torch.export import Dim  # noqa: E402
from torch.fx.experimental import _config as fx_config  # noqa: E402

from hookscope.torch import InputObserver  # noqa: E402

VOCAB, HIDDEN, IMAGE_TOKEN, IMAGE_TOKENS, SIDE = 50, 16, 0, 4, 8


class TinyVLM(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = torch.nn.Embedding(VOCAB, HIDDEN)
        self.patch = torch.nn.Conv2d(3, HIDDEN, kernel_size=SIDE // 2, stride=SIDE // 2)  # 2x2 = IMAGE_TOKENS patches
        self.qkv = torch.nn.Linear(HIDDEN, 3 * HIDDEN)
        self.out = torch.nn.Linear(HIDDEN, VOCAB)

    def forward(self, input_ids, pixel_values=None, past_key_values=None):
        x = self.embed(input_ids)
        if pixel_values is not None:
            image = self.patch(pixel_values).flatten(2).transpose(1, 2)  # (images, IMAGE_TOKENS, HIDDEN)
            x = x.masked_scatter((input_ids == IMAGE_TOKEN).unsqueeze(-1), image.to(x.dtype))
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        if past_key_values is not None:
            k = torch.cat([past_key_values[0], k], dim=1)
            v = torch.cat([past_key_values[1], v], dim=1)
        past, s = k.shape[1] - q.shape[1], q.shape[1]
        causal = torch.arange(past + s).unsqueeze(0) <= (past + torch.arange(s)).unsqueeze(1)
        scores = (q @ k.transpose(1, 2)) / math.sqrt(HIDDEN)
        attn = scores.masked_fill(~causal, float("-inf")).softmax(dim=-1)
        return self.out(attn @ v), (k, v)


def prompt(batch, text, g):
    ids = torch.randint(1, VOCAB, (batch, IMAGE_TOKENS + text), generator=g)
    ids[:, :IMAGE_TOKENS] = IMAGE_TOKEN
    return ids, torch.randn(batch, 3, SIDE, SIDE, generator=g)


def generate(model, ids, pixel_values, new_tokens=3):
    """Greedy decoding as generate() does it: a prefill with the image, then one token per step with the cache."""
    with torch.no_grad():
        logits, past = model(ids, pixel_values=pixel_values)
        for _ in range(new_tokens - 1):
            logits, past = model(logits[:, -1:].argmax(-1), past_key_values=past)


@pytest.fixture(scope="module")
def vlm():
    torch.manual_seed(0)
    return TinyVLM().eval()


@pytest.fixture(scope="module")
def observed(vlm):
    obs = InputObserver(value_if_missing={"pixel_values": torch.empty((0, 3, SIDE, SIDE))})
    g = torch.Generator().manual_seed(1)
    for batch, text in ((2, 3), (3, 5)):  # two prompts of different batch and length
        with obs(vlm):
            generate(vlm, *prompt(batch, text, g))
    return obs


def inputs_at(b, s, p, image, g):
    """One call: b sequences of s new tokens after p cached ones; with the image (a prefill) or its empty stand-in."""
    if image:
        ids, pixels = prompt(b, s - IMAGE_TOKENS, g)
    else:
        ids, pixels = torch.randint(1, VOCAB, (b, s), generator=g), torch.empty((0, 3, SIDE, SIDE))
    past = (torch.randn(b, p, HIDDEN, generator=g), torch.randn(b, p, HIDDEN, generator=g))
    return {"input_ids": ids, "pixel_values": pixels, "past_key_values": past}


def test_image_only_at_prefill_is_recorded(observed):
    assert observed.num_obs == 6
    ds = observed.infer_dynamic_shapes()
    # pixel_values: 2 and 3 at the prefills, 0 (value_if_missing) at the decode steps
    assert ds == {"input_ids": {0: Dim.DYNAMIC, 1: Dim.DYNAMIC}, "pixel_values": {0: Dim.DYNAMIC},
                  "past_key_values": ({0: Dim.DYNAMIC, 1: Dim.DYNAMIC}, {0: Dim.DYNAMIC, 1: Dim.DYNAMIC})}
    kwargs = observed.infer_arguments()
    assert list(kwargs) == ["input_ids", "pixel_values", "past_key_values"]
    assert kwargs["input_ids"].shape == (2, 1) and kwargs["pixel_values"].shape == (0, 3, SIDE, SIDE)
    assert isinstance(kwargs["past_key_values"], tuple)  # the container type as observed
    # named: the image's batch is not the text's (0 at decode), so it is not shared (a label is shared only by dimensions equal in every call)
    named = observed.infer_dynamic_shapes(dim_names=True)
    assert named["pixel_values"][0] is not named["input_ids"][0]
    assert observed.needs_backed_size_oblivious()  # pixel_values 0, sequence 1


def seen_calls(obs):
    """(batch, sequence, past, image given) of every stored call."""
    out = []
    for c in obs.engine_info["calls"]:
        (ids,), kw = c["inputs"]["args"], dict(c["inputs"]["kwargs"])  # generate() passes input_ids by position
        past = kw.get("past_key_values")
        out.append((*ids["shape"], past["tuple"][0]["shape"][1] if past else 0, past is None))
    return out


def check(model, ep, calls, g, with_past=True):
    for b, s, p, image in calls:
        x = inputs_at(b, s, p, image, g)
        if not with_past:
            del x["past_key_values"]
        with torch.no_grad():
            expected = model(**copy.deepcopy(x))
            got = ep.module()(**copy.deepcopy(x))
        torch.testing.assert_close(got, expected)


def test_one_program_from_all_calls_refuses_the_prefill(vlm, observed):
    """The observer's arguments (a decode step: sequence 1, the empty image) export under backed_size_oblivious, and
    the program runs every decode shape; torch 2.15 traced a guard `input_ids.size()[1] <= 2` from the size-1
    example, so the prefill (sequence 7, 9) is refused: one program per phase below."""
    assert seen_calls(observed) == [(2, 7, 0, True), (2, 1, 7, False), (2, 1, 8, False),
                                    (3, 9, 0, True), (3, 1, 9, False), (3, 1, 10, False)]
    with fx_config.patch(backed_size_oblivious=True):
        ep = torch.export.export(vlm, (), kwargs=observed.infer_arguments(),
                                 dynamic_shapes=observed.infer_dynamic_shapes())
    g = torch.Generator().manual_seed(2)
    check(vlm, ep, [c for c in seen_calls(observed) if not c[3]] + [(3, 1, 7, False), (2, 1, 10, False)], g)
    with pytest.raises(Exception, match=r"input_ids.size\(\)\[1\] <= 2"):
        ep.module()(**inputs_at(2, 7, 0, True, g))


def test_one_program_per_phase(vlm, observed):
    """select() splits the calls by phase: the prefill program (the image, no cache) and the decode program (the
    cache, the empty image) export without backed_size_oblivious and are exact at every observed shape of their phase
    and at unobserved shapes inside its ranges."""
    prefill = observed.select(lambda args, kwargs: args[0].shape[1] > 1)
    decode = observed.select(lambda args, kwargs: args[0].shape[1] == 1)
    g = torch.Generator().manual_seed(3)

    ds = prefill.infer_dynamic_shapes()
    assert ds == {"input_ids": {0: Dim.DYNAMIC, 1: Dim.DYNAMIC}, "pixel_values": {0: Dim.DYNAMIC}}
    assert not prefill.needs_backed_size_oblivious()
    ep = torch.export.export(vlm, (), kwargs=prefill.infer_arguments(), dynamic_shapes=ds)
    calls = seen_calls(prefill)
    assert calls == [(2, 7, 0, True), (3, 9, 0, True)]
    check(vlm, ep, calls + [(2, 9, 0, True), (3, 8, 0, True), (2, 6, 0, True)], g, with_past=False)

    ds = decode.infer_dynamic_shapes()
    assert ds == {"input_ids": {0: Dim.DYNAMIC}, "pixel_values": {},
                  "past_key_values": ({0: Dim.DYNAMIC, 1: Dim.DYNAMIC}, {0: Dim.DYNAMIC, 1: Dim.DYNAMIC})}
    assert not decode.needs_backed_size_oblivious()
    ep = torch.export.export(vlm, (), kwargs=decode.infer_arguments(), dynamic_shapes=ds)
    calls = seen_calls(decode)
    assert calls == [(2, 1, 7, False), (2, 1, 8, False), (3, 1, 9, False), (3, 1, 10, False)]
    check(vlm, ep, calls + [(3, 1, 7, False), (2, 1, 10, False), (2, 1, 9, False)], g)
