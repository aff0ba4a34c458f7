"""The README's "From Python" example runs as written and its export works."""
import re

import pytest

from helpers import ROOT

torch = pytest.importorskip("torch", reason="torch is installed by tools/python_env.sh")


def test_readme_from_python_example_runs():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    section = text[text.index("## From Python\n"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    scope = {}
    exec(compile(code, "README.md (From Python)", "exec"), scope)
    ep, observer = scope["ep"], scope["observer"]
    assert observer.num_obs == 6
    kwargs = observer.infer_arguments()
    with torch.no_grad():
        torch.testing.assert_close(ep.module()(**kwargs).logits, scope["model"](**kwargs).logits)
    (program,) = scope["programs"].values()  # no dim is 1 in every call of a phase: one phase
    assert list(scope["programs"]) == ["all calls"]
    with torch.no_grad():
        torch.testing.assert_close(program.module()(**kwargs).logits, scope["model"](**kwargs).logits)
