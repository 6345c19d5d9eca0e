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


# --- import circles -------------------------------------------------------------------
PACKAGES = ("indexer", "models", "localrag", "tui")


def _imports_of(path: Path, module: str, known: set[str]) -> set[str]:
    """Project modules `module` imports anywhere in its file, top level or inside a
    function (a lazy import still ties the two modules together); imports under
    `if TYPE_CHECKING:` are left out (they exist for annotations only)."""
    import ast

    package = module.rsplit(".", 1)[0] if path.name != "__init__.py" else module
    tree = ast.parse(path.read_text(), str(path))
    type_only = {id(n) for block in ast.walk(tree) if isinstance(block, ast.If)
                 and ast.unparse(block.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING")
                 for stmt in block.body for n in ast.walk(stmt)}   # annotations only: no tie at run time
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in type_only:
            continue
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parent = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(parent + ([base] if base else []))
            names = [base] + [f"{base}.{a.name}" for a in node.names]
        for name in names:
            if name in known and name != module:
                found.add(name)
    return found


def import_graph() -> dict[str, set[str]]:
    files = {m: ROOT / Path(*m.split(".")) for p in PACKAGES for m in _modules(p)}
    files = {m: (f / "__init__.py" if f.is_dir() else f.with_suffix(".py")) for m, f in files.items()}
    known = set(files)
    return {m: _imports_of(f, m, known) for m, f in files.items()}


def find_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Each strongly connected group of two or more modules (Tarjan), sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                circles.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(circles)


def test_find_circles_sees_a_lazy_import_circle(tmp_path: Path) -> None:
    # the shape embedder <-> onnx_export had: one side imports the other inside a function
    (tmp_path / "a.py").write_text("import b\n")
    (tmp_path / "b.py").write_text("def f():\n    from a import g\n")
    (tmp_path / "c.py").write_text("import a\n")
    known = {"a", "b", "c"}
    graph = {m: _imports_of(tmp_path / f"{m}.py", m, known) for m in known}
    assert find_circles(graph) == [["a", "b"]]


# parsers imports markup lazily and markup imports parsers' records; both files belong to
# the parser work of issue 20 (another branch), which is to break this one
KNOWN_CIRCLES = [["indexer.markup", "indexer.parsers"]]


def test_no_import_circles() -> None:
    graph = import_graph()
    assert "indexer.onnx_export" in graph["indexer.embedder"]   # the graph sees lazy imports
    assert [c for c in find_circles(graph) if c not in KNOWN_CIRCLES] == []
