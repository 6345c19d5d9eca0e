"""The built wheel contains every package: install it into a fresh virtual environment
(dependencies taken from this environment, so llama.cpp is not recompiled) and run
`localrag --help` from another directory."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_wheel_installs_and_runs(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    # build from a clean copy: setuptools' build/ folder in the checkout would keep
    # modules that were since deleted and ship them in the wheel
    src = tmp_path / "src"
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(
        ".git", "build", "dist", "*.egg-info", "__pycache__", "tests", "bench"))
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation",
                    "--outdir", str(dist), str(src)],
                   check=True, capture_output=True, timeout=600)
    [wheel] = list(dist.glob("localrag-*.whl"))
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(env_dir)
    py = env_dir / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "--no-deps", "--no-index", str(wheel)],
                   check=True, capture_output=True, timeout=300)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    out = subprocess.run([str(env_dir / "bin" / "localrag"), "--help"], cwd=elsewhere,
                         capture_output=True, text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert "ask" in out.stdout and "index" in out.stdout
    # the generic top-level packages come from the wheel, not from the source tree
    code = ("import indexer, models, tui, localrag, tui.screens, tui.widgets;"
            "print(localrag.__file__); print(indexer.__file__)")
    out = subprocess.run([str(py), "-c", code], cwd=elsewhere, capture_output=True,
                         text=True, timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert str(env_dir) in out.stdout and str(ROOT) not in out.stdout
    # the stylesheet ships too
    tcss = subprocess.run([str(py), "-c", "import tui, pathlib; print(sorted(p.name for p in "
                           "pathlib.Path(tui.__file__).parent.glob('*.tcss')))"],
                          cwd=elsewhere, capture_output=True, text=True, env=env)
    assert ".tcss" in tcss.stdout
