"""Real architectures end to end: transformers' models built from tiny configs (random weights, nothing downloaded),
generate() observed on two prompts of different batch and length in one `with` block (an encoder's forward on
three calls), each phase of phases() exported with torch.export and run at a batch, prompt length and cache length
never observed (the calls of a fresh generate()), against the eager model: every output tensor (logits and cache).

By default a few architectures run, each for what it alone exercises: a plain decoder (Llama), a sliding-window cache
(Mistral, whose empty layers keep a 0-d tensor), an encoder-decoder (T5: every decoder step of length 1, the first
with an empty cache) and a vision-language model (LLaVA: image features at the prefill, one tensor per image).
HOOKSCOPE_ZOO=all runs every architecture of ZOO; HOOKSCOPE_ZOO=llama,gpt2 runs those (docs/python.md, "Real
architectures")."""
import contextlib
import copy
import dataclasses
import os
import time
import warnings
from typing import Callable

import pytest

torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")
transformers = pytest.importorskip("transformers", reason="transformers is installed by tools/python_env.sh")
import torch.utils._pytree as pytree  # noqa: E402
from transformers.exporters.exporter_dynamo import register_cache_pytrees_for_model  # noqa: E402
from transformers.exporters.utils import apply_patches  # noqa: E402

import hookscope  # noqa: E402
from hookscope.torch import InputObserver  # noqa: E402

T = transformers
VOCAB, IMAGE_TOKEN, SIDE = 100, 99, 16
TEXT = dict(hidden_size=32, intermediate_size=64, num_attention_heads=4, num_key_value_heads=2, num_hidden_layers=2,
            vocab_size=VOCAB, max_position_embeddings=128)


@dataclasses.dataclass
class Arch:
    build: Callable[[], "torch.nn.Module"]
    kind: str = "decoder"  # decoder, encoder-decoder, vision-language, encoder
    # Traced as transformers' own exporter traces them (transformers.exporters.utils.apply_patches("dynamo")): a
    # sliding-window layer's update reads its Python token counter, which torch.export would bake into the program.
    patched: bool = False
    image_tokens: int = 0
    audio: bool = False  # Whisper: log-mel features of a fixed length instead of token ids


def llava():
    vision = T.CLIPVisionConfig(hidden_size=32, intermediate_size=64, num_attention_heads=4, num_hidden_layers=1,
                                image_size=SIDE, patch_size=4, projection_dim=32)
    return T.LlavaForConditionalGeneration(T.LlavaConfig(vision_config=vision, text_config=T.LlamaConfig(**TEXT),
                                                         image_token_id=IMAGE_TOKEN))


ZOO = {
    "llama": Arch(lambda: T.LlamaForCausalLM(T.LlamaConfig(**TEXT))),
    "mistral": Arch(lambda: T.MistralForCausalLM(T.MistralConfig(**TEXT)), patched=True),  # sliding_window 4096
    "qwen2": Arch(lambda: T.Qwen2ForCausalLM(T.Qwen2Config(**TEXT))),
    "qwen3": Arch(lambda: T.Qwen3ForCausalLM(T.Qwen3Config(**TEXT, head_dim=8))),
    "phi3": Arch(lambda: T.Phi3ForCausalLM(T.Phi3Config(**TEXT, pad_token_id=0))),
    "gemma": Arch(lambda: T.GemmaForCausalLM(T.GemmaConfig(**TEXT, head_dim=8))),
    "gemma3": Arch(lambda: T.Gemma3ForCausalLM(T.Gemma3TextConfig(**TEXT, head_dim=8)), patched=True),
    "gpt2": Arch(lambda: T.GPT2LMHeadModel(T.GPT2Config(n_embd=32, n_layer=2, n_head=4, vocab_size=VOCAB,
                                                        n_positions=128, bos_token_id=1, eos_token_id=2))),
    "gpt_neox": Arch(lambda: T.GPTNeoXForCausalLM(T.GPTNeoXConfig(
        hidden_size=32, intermediate_size=64, num_attention_heads=4, num_hidden_layers=2, vocab_size=VOCAB,
        max_position_embeddings=128))),
    "opt": Arch(lambda: T.OPTForCausalLM(T.OPTConfig(
        hidden_size=32, ffn_dim=64, num_attention_heads=4, num_hidden_layers=2, vocab_size=VOCAB,
        max_position_embeddings=128, word_embed_proj_dim=32))),
    "falcon": Arch(lambda: T.FalconForCausalLM(T.FalconConfig(
        hidden_size=32, num_attention_heads=4, num_hidden_layers=2, vocab_size=VOCAB))),
    "mixtral": Arch(lambda: T.MixtralForCausalLM(T.MixtralConfig(**TEXT, num_local_experts=4, num_experts_per_tok=2))),
    "qwen2_moe": Arch(lambda: T.Qwen2MoeForCausalLM(T.Qwen2MoeConfig(
        **TEXT, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32, shared_expert_intermediate_size=32))),
    "t5": Arch(lambda: T.T5ForConditionalGeneration(T.T5Config(
        vocab_size=VOCAB, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4, decoder_start_token_id=0,
        pad_token_id=0, eos_token_id=1)), kind="encoder-decoder"),
    "bart": Arch(lambda: T.BartForConditionalGeneration(T.BartConfig(
        vocab_size=VOCAB, d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=128)),
        kind="encoder-decoder"),
    "whisper": Arch(lambda: T.WhisperForConditionalGeneration(T.WhisperConfig(
        vocab_size=VOCAB, num_mel_bins=8, encoder_layers=1, decoder_layers=1, encoder_attention_heads=4,
        decoder_attention_heads=4, encoder_ffn_dim=64, decoder_ffn_dim=64, d_model=32, max_source_positions=8,
        max_target_positions=64, decoder_start_token_id=1, pad_token_id=0, bos_token_id=1, eos_token_id=2,
        suppress_tokens=[], begin_suppress_tokens=[])), kind="encoder-decoder", audio=True),
    "llava": Arch(llava, kind="vision-language", image_tokens=(SIDE // 4) ** 2),
    "bert": Arch(lambda: T.BertModel(T.BertConfig(
        hidden_size=32, intermediate_size=64, num_attention_heads=4, num_hidden_layers=2, vocab_size=VOCAB,
        max_position_embeddings=128)), kind="encoder"),
}
DEFAULT = ["llama", "mistral", "t5", "llava"]


def selected() -> list[str]:
    wanted = os.environ.get("HOOKSCOPE_ZOO", "")
    if wanted == "all":
        return list(ZOO)
    names = [n for n in wanted.split(",") if n] or DEFAULT
    unknown = [n for n in names if n not in ZOO]
    if unknown:
        raise ValueError(f"HOOKSCOPE_ZOO names {unknown}, which ZOO lacks ({', '.join(ZOO)})")
    return names


def build(name: str):
    torch.manual_seed(0)
    model = ZOO[name].build()
    for config in (model.config, getattr(model.config, "text_config", None), getattr(model.config, "vision_config",
                                                                                       None)):
        if config is not None:
            # Eager attention: under backed_size_oblivious (the prefill's empty cache), SDPA's is_causal becomes a
            # SymBool, which scaled_dot_product_attention refuses.
            config._attn_implementation = "eager"
    register_cache_pytrees_for_model(model)
    return model.eval()


def prompt(arch: Arch, batch: int, length: int, g) -> dict:
    if arch.audio:  # the encoder takes 2 * max_source_positions frames, whatever the batch
        return {"input_features": torch.randn(batch, 8, 16, generator=g)}
    ids = torch.randint(3, IMAGE_TOKEN - 1, (batch, arch.image_tokens + length), generator=g)
    kwargs = {"input_ids": ids, "attention_mask": torch.ones_like(ids)}
    if arch.image_tokens:
        ids[:, :arch.image_tokens] = IMAGE_TOKEN
        kwargs["pixel_values"] = torch.randn(batch, 3, SIDE, SIDE, generator=g)
    return kwargs


def run(model, arch: Arch, observer, prompts, g, new_tokens=3) -> None:
    """generate() (an encoder: forward) on each prompt, all observed in one `with` block."""
    with observer(model), warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        for batch, length in prompts:
            kwargs = prompt(arch, batch, length, g)
            if arch.kind == "encoder":
                model(**kwargs)
            else:
                model.generate(**kwargs, max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False)


def program_inputs(ep, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The call's leaves in the tree the program was traced with. A transformers cache's tree spec holds its Python
    state (a sliding-window layer's token counter), which the program's input check compares: a cache of another
    length has the same leaves in another spec."""
    spec = ep.call_spec.in_spec
    names = spec.child(1).context
    return pytree.tree_unflatten(pytree.tree_leaves((tuple(args), {k: kwargs[k] for k in names})), spec)


def program_for(bundles, name: str, kwargs: dict):
    """The phase whose program takes a call of a fresh observation's phase `name`, and the call as that phase's
    observer aligns it: the phase of that name, or of that name and the leaf counts that divide it (LLaVA's prefills
    by their number of images), whose calls share the call's tree. (None, None) when no phase takes it."""
    for phase in bundles:
        if phase.name != name and not phase.name.startswith(name + " ("):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return phase, phase.observer.infer_arguments(kwargs, as_args_kwargs=True)
        except hookscope.InferenceError:  # another tree: another number of images
            continue
    return None, None


def check_architecture(name: str) -> dict:
    arch, begin = ZOO[name], time.perf_counter()
    model, g = build(name), torch.Generator().manual_seed(1)
    observer = InputObserver(store_n_calls=50)
    prompts = {"encoder": [(2, 5), (3, 7), (4, 6)],
               # LLaVA's image features are one tensor per image: no program takes a number of images other than the
               # one it was traced with, so its prefills are a phase per number of images, each observed at two
               # prompt lengths, and their batch is not forced dynamic (it would fail to export).
               "vision-language": [(2, 5), (3, 7), (2, 8), (3, 4)]}.get(arch.kind, [(2, 5), (3, 7)])
    run(model, arch, observer, prompts, g)
    batch = None if arch.kind == "vision-language" else True
    bundles = observer.phases(set_batch_dimension_for=batch)
    programs = {}
    for phase in bundles:
        with apply_patches("dynamo") if arch.patched else contextlib.nullcontext():
            programs[phase.name] = phase.export(model)
    # Calls never observed: batch 4 with a prompt of 9 and five new tokens (caches of 9 to 12 positions, an
    # encoder-decoder's self-attention caches of 3 and 4); LLaVA's prefills also at batches 2 and 3 (the numbers of
    # images observed) with a prompt of 9.
    fresh = InputObserver(store_n_calls=50)
    unseen = {"encoder": [(5, 9)], "vision-language": [(4, 9), (2, 9), (3, 9)]}.get(arch.kind, [(4, 9)])
    run(model, arch, fresh, unseen, g, new_tokens=5)
    ran = []
    for fresh_phase in fresh.phases():
        fresh_name = fresh_phase.name.split(" (")[0]  # without the leaf counts that divide the fresh calls
        for i in fresh_phase.calls:
            args, kwargs = fresh._stored_inputs(i)
            phase, aligned = program_for(bundles, fresh_name, kwargs)
            if phase is None:
                # Only a prefill of LLaVA with a number of images never observed finds no program.
                assert arch.kind == "vision-language" and fresh_name == "prefill", (name, fresh_phase, i)
                assert kwargs["input_ids"].shape[0] not in (2, 3)
                continue
            ep = programs[phase.name]
            with torch.no_grad():
                expected = model(*copy.deepcopy(args), **copy.deepcopy(kwargs))
                p_args, p_kwargs = program_inputs(ep, *copy.deepcopy(aligned))
                got = ep.module()(*p_args, **p_kwargs)
            got, expected = pytree.tree_leaves(got), pytree.tree_leaves(expected)
            assert len(got) == len(expected)
            for x, y in zip(got, expected):
                torch.testing.assert_close(x, y)
            ran.append((phase.name, next(tuple(x.shape) for x in kwargs.values() if isinstance(x, torch.Tensor))))
    assert {p for p, _ in ran} == set(programs), (name, ran)  # every program ran an unseen call
    return {"phases": [p.name for p in bundles], "ran": ran, "seconds": time.perf_counter() - begin}


@pytest.mark.parametrize("name", selected())
def test_architecture_exports_each_phase_and_runs_unseen_shapes(name):
    result = check_architecture(name)
    print(f"{name}: {result['seconds']:.1f} s, phases {result['phases']}")
