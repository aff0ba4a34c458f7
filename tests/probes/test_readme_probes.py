"""The README's USDT recipes, run as written on the demo (examples/tiny_llm): the bpftrace latency histogram per batch
size and the gdb recipe. The README names the demo `build/examples/tiny_llm`; the test runs the commands with that path
replaced by the demo it was given. A tool that cannot run here makes its test skip with a sentence naming it."""
import re
import subprocess

import pytest

from support import SOURCE_ROOT

README = (SOURCE_ROOT / "README.md").read_text(encoding="utf-8")
README_DEMO = "build/examples/tiny_llm"


def recipe(marker):
    """The ```sh block after `<!-- probes: marker -->` in the README."""
    start = README.index(f"<!-- probes: {marker} -->")
    body = README[README.index("```sh\n", start) + len("```sh\n"):]
    return body[:body.index("```\n")]


@pytest.fixture(scope="module")
def probes_built(usdt_enabled, hooks_enabled):
    if not (usdt_enabled and hooks_enabled):
        pytest.skip("the demo has no probes in this build (hooks disabled or no USDT): the recipes have nothing to "
                    "attach to")


def test_readme_recipes_name_the_demo():
    for marker in ("bpftrace", "gdb"):
        assert README_DEMO in recipe(marker), f"the README's {marker} recipe does not run {README_DEMO}"


def test_readme_bpftrace_histogram(probes_built, tiny_llm, bpftrace_tool):
    command = recipe("bpftrace").replace(README_DEMO, tiny_llm)
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, f"the README's bpftrace recipe failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    # The demo runs prompts of batch 1 and a generation of batch 2: one histogram per batch size, each with buckets.
    histograms = re.findall(r"^@us\[(\d+)\]:\s*\n((?:\[.*\n)+)", done.stdout, re.M)
    assert sorted(int(batch) for batch, _ in histograms) == [1, 2], \
        f"expected histograms for batch sizes 1 and 2:\n{done.stdout[-3000:]}"


def test_readme_gdb_recipe(probes_built, tiny_llm, gdb_tool):
    command = recipe("gdb").replace(README_DEMO, tiny_llm).replace("gdb -batch", f"{gdb_tool} -nx -batch", 1)
    done = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=120)
    assert "tiny_llm::model::forward\n" in done.stdout, f"gdb did not print the registry name:\n{done.stdout[-3000:]}"
    # The first call of forward is a prompt's, of batch 1: the first dimension of input_ids (arg2, its shape first).
    assert re.search(r"^\$1 = 1$", done.stdout, re.M), f"gdb did not read batch 1:\n{done.stdout[-3000:]}"
