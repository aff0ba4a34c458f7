"""Helpers of hookscope's Python tests (imported by the tests; conftest.py puts this directory on sys.path)."""
import os
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"
def build_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("HOOKSCOPE_BUILD_DIR", ROOT / "build")).resolve()


def prompts():
    """Two prompts of different batch and length."""
    import torch
    g = torch.Generator().manual_seed(1)
    return [torch.randint(0, 100, (2, 5), generator=g), torch.randint(0, 100, (3, 7), generator=g)]


def observe_generate(observer, model, max_new_tokens=3):
    """generate() for each prompt in its own `with` block (each block keeps store_n_calls calls)."""
    for ids in prompts():
        with observer(model):
            model.generate(ids, max_new_tokens=max_new_tokens, do_sample=False, use_cache=False)
    return observer
