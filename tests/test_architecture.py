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
