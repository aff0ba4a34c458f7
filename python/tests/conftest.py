"""Fixtures of hookscope's Python tests: a tiny random Llama (nothing downloaded). Run with
--import-mode=importlib (pyproject.toml says so), against the installed package."""
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.fixture(scope="session")
def tiny_llama():
    """LlamaForCausalLM with 2 layers, hidden size 32, random weights from a config; use_cache=False so that
    forward takes only tensors (transformers 5's DynamicCache is not a registered pytree node)."""
    torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")
    transformers = pytest.importorskip("transformers", reason="transformers is installed by tools/python_env.sh")
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(num_hidden_layers=2, hidden_size=32, intermediate_size=64, num_attention_heads=4,
                                   num_key_value_heads=2, vocab_size=100, max_position_embeddings=128, use_cache=False)
    return transformers.LlamaForCausalLM(cfg).eval()




@pytest.fixture(scope="session")
def tiny_llama_cached():
    """The same tiny Llama generating WITH its KV cache (transformers' DynamicCache). transformers 5 does not register
    its caches as pytree nodes; transformers.exporters.exporter_dynamo.register_cache_pytrees_for_model, the
    registration its own DynamoExporter makes before torch.export, does (the observer flattens with torch's pytree,
    so it then records the cache's tensors). Eager attention: under backed_size_oblivious (needed for the prefill's
    empty cache, see test_kv_cache.py) transformers 5.24's SDPA path passes a SymBool is_causal to
    scaled_dot_product_attention, which refuses it."""
    torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")
    transformers = pytest.importorskip("transformers", reason="transformers is installed by tools/python_env.sh")
    from transformers.exporters.exporter_dynamo import register_cache_pytrees_for_model
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(num_hidden_layers=2, hidden_size=32, intermediate_size=64, num_attention_heads=4,
                                   num_key_value_heads=2, vocab_size=100, max_position_embeddings=128,
                                   attn_implementation="eager")
    model = transformers.LlamaForCausalLM(cfg).eval()
    register_cache_pytrees_for_model(model)
    return model
