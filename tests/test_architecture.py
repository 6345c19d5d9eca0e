"""Dependency direction (ARCHITECTURE.md) and a light `--help`.

tui -> localrag -> indexer, models; indexer and models never import each other, localrag
or tui; nothing but tui imports textual. Checked in fresh interpreters, module by module.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {
    "indexer": {"localrag", "models", "tui", "textual"},
    "models": {"localrag", "indexer", "tui", "textual"},
    "localrag": {"tui", "textual"},
}


def _modules(package: str) -> list[str]:
    names = []
    for path in sorted((ROOT / package).rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__main__":
            continue                      # runs the CLI when imported
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(parts))
    return names


PROBE = """
import importlib, json, sys
before = set(sys.modules)
importlib.import_module(sys.argv[1])
print(json.dumps(sorted({m.split('.')[0] for m in set(sys.modules) - before})))
"""


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_dependency_direction(package: str) -> None:
    bad: dict[str, list[str]] = {}
    for module in _modules(package):
        out = subprocess.run([sys.executable, "-c", PROBE, module], cwd=ROOT,
                             capture_output=True, text=True, timeout=120)
        assert out.returncode == 0, f"importing {module} failed:\n{out.stderr}"
        loaded = set(json.loads(out.stdout.strip().splitlines()[-1]))
        wrong = sorted(loaded & FORBIDDEN[package])
        if wrong:
            bad[module] = wrong
    assert not bad, f"forbidden imports: {bad}"


def test_help_imports_nothing_heavy() -> None:
    code = ("import sys; from localrag.cli import build_parser; build_parser().format_help();"
            "heavy = {'torch', 'sentence_transformers', 'llama_cpp', 'textual', 'hnswlib'};"
            "print(sorted(heavy & {m.split('.')[0] for m in sys.modules}))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def _first_party_imports(path: Path, packages: set[str]) -> set[str]:
    """Every first-party module `path` imports at run time, at its top or inside a
    function (imports under `if TYPE_CHECKING:` only name types for checkers)."""
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and getattr(node.test, "id", getattr(node.test, "attr", "")) == "TYPE_CHECKING":
            node.body = []
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        found |= {n for n in names if n.split(".")[0] in packages}
    return found


def test_no_import_circles() -> None:
    """No module imports (even lazily, inside a function) one that imports it back, through
    any chain: indexer/markup.py and indexer/parsers.py once did (the document types now
    live in indexer/documents.py)."""
    packages = {"indexer", "models", "localrag", "tui"}
    modules = {m: ROOT / (m.replace(".", "/") + ".py") for p in packages for m in _modules(p)}
    modules = {m: (p if p.exists() else p.with_suffix("") / "__init__.py") for m, p in modules.items()}
    graph = {m: {i for i in _first_party_imports(path, packages) if i in modules and i != m}
             for m, path in modules.items()}
    # strongly connected components (Tarjan): a component of two or more is a circle
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                circles.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    assert not circles, f"import circles: {circles}"


def test_the_circle_check_catches_markup_and_parsers(tmp_path: Path) -> None:
    """The check above sees a lazy import inside a function (how parsers.py imported
    markup.py while markup.py imported parsers.py at its top)."""
    lazy = tmp_path / "a.py"
    lazy.write_text("def f():\n    from indexer.markup import clean_doc\n")
    assert _first_party_imports(lazy, {"indexer"}) == {"indexer.markup", "indexer.markup.clean_doc"}


def test_the_circle_check_sees_the_embedder_export_lazy_import() -> None:
    """embedder.py imports onnx_export.py inside a function; onnx_export.py once imported
    embedder.py back (for a helper, now in indexer/model_env.py): the graph must see the
    lazy edge for the check above to catch such a circle."""
    found = _first_party_imports(ROOT / "indexer" / "embedder.py", {"indexer"})
    assert "indexer.onnx_export" in found
    assert "indexer.embedder" not in _first_party_imports(ROOT / "indexer" / "onnx_export.py", {"indexer"})
