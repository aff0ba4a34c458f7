"""The Python package's modules import downward only: the import graph of python/hookscope/**/*.py (every import
statement, also those inside functions and under ``if TYPE_CHECKING:``) has no cycle. A helper that needs something
of a higher module is handed it as an argument. Read from the sources (ast), so no module is imported."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "hookscope"


def module_files(root: Path) -> dict[str, Path]:
    """{dotted module name: its file} for every .py and .pyi under root (a .pyi stands for a compiled module)."""
    out = {}
    for f in sorted(root.rglob("*.py*")):
        if f.suffix not in (".py", ".pyi"):
            continue
        parts = list(f.relative_to(root.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out.setdefault(".".join(parts), f)
    return out


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of the package that module ``name`` imports (a name imported from a package is the submodule of
    that name if there is one, else the package itself)."""
    is_package = path.name.startswith("__init__.")
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names if a.name in modules)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = name.split(".") if is_package else name.split(".")[:-1]
                base = base[:len(base) - (node.level - 1)]
                origin = ".".join(base + ([node.module] if node.module else []))
            else:
                origin = node.module or ""
            for a in node.names:
                if f"{origin}.{a.name}" in modules:
                    out.add(f"{origin}.{a.name}")
                elif origin in modules:
                    out.add(origin)
    out.discard(name)
    return out


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of the graph as the path that closes it (``[a, b, a]``), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        path.append(n)
        for m in sorted(graph.get(n, ())):
            if state.get(m) == 1:
                return path[path.index(m):] + [m]
            if m not in state:
                found = visit(m)
                if found:
                    return found
        path.pop()
        state[n] = 2
        return None

    for n in sorted(graph):
        if n not in state:
            found = visit(n)
            if found:
                return found
    return None


def test_the_package_imports_downward_only():
    modules = module_files(PACKAGE)
    assert "hookscope.torch._observer" in modules and "hookscope._engine" in modules, sorted(modules)
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    assert "hookscope.torch._observer" in graph["hookscope.torch"]  # the parse sees relative imports
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle)


def test_a_cycle_is_found_and_named(tmp_path):
    """The check itself: an upward import, even one inside a function, is a cycle, named module by module."""
    root = tmp_path / "pkg"
    (root / "sub").mkdir(parents=True)
    (root / "__init__.py").write_text("from .sub import low\n")
    (root / "sub" / "__init__.py").write_text("")
    (root / "sub" / "low.py").write_text("def f():\n    from ..sub import high\n")
    (root / "sub" / "high.py").write_text("from . import low\n")
    modules = module_files(root)
    graph = {name: imports_of(name, path, modules) for name, path in modules.items()}
    assert graph["pkg"] == {"pkg.sub.low"}
    assert find_cycle(graph) == ["pkg.sub.low", "pkg.sub.high", "pkg.sub.low"]
    (root / "sub" / "low.py").write_text("def f():\n    pass\n")
    graph["pkg.sub.low"] = imports_of("pkg.sub.low", root / "sub" / "low.py", modules)
    assert find_cycle(graph) is None
