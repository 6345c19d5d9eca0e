"""Every command in the README's Usage block is run here, against a real temporary data
directory, a real index (SQLite + hnswlib + MiniLM) and the real default model.

The two commands that open the terminal app (`localrag`, `localrag tui`) are driven by
the Pilot tests in test_tui_*.py instead; `localrag watch` runs until interrupted, so it
is started, made to re-index one change, and stopped. `localrag models pull` downloads
from a local stand-in for the Hugging Face Hub (tests/hub_server.py, through
HF_ENDPOINT) serving the test GGUF under the catalogue's name; it is the one command run
with HF_HUB_OFFLINE unset.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from conftest_models import test_gguf_factory, tiny_gguf  # noqa: E402,F401  (fixtures)
from hub_server import HubServer  # noqa: E402
from sigint import default_sigint  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]

NOTES = {
    "aqueduct.md": "# Lisbon trip\n\n## Aqueduct\n\nThe Aqueduto das Aguas Livres in Lisbon "
    "was built between 1731 and 1799. Its tallest arch is 65 metres high. We walked along "
    "the top on our second day.\n",
    "server.md": "# Home server\n\nWe moved the home server to the basement on 12 March 2024 "
    "because the attic got too hot in summer. The NAS now sits next to the router.\n",
    "recipes.txt": "Bread: 500 g flour, 350 g water, 10 g salt, 5 g yeast. Bake at 230 C "
    "for 35 minutes.\n",
}


def _expand_optional(command: str) -> str:
    """`[--json]` is run with the option; `[FILE.gguf]`-style placeholders are left out."""
    def repl(m: re.Match[str]) -> str:
        inner = m.group(1)
        return "" if re.search(r"\b[A-Z][A-Z_.]+\b", inner.replace("--", "")) else inner
    return " ".join(re.sub(r"\[([^\]]*)\]", repl, command).split())


def usage_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    block = readme.split("## Usage", 1)[1].split("\n\n", 2)[1]
    commands = []
    for line in block.splitlines():
        line = line.strip()
        if not line.startswith("localrag"):
            continue
        command = line.split("  #", 1)[0].strip()
        commands += [c.strip() for c in command.split(";")] if ";" in command else [command]
    # "localrag roots --remove ..." appears after a semicolon inside the comment
    for extra in re.findall(r"#.*?;\s*(localrag [^#\n]+)", block):
        commands.append(extra.strip())
    return [_expand_optional(c) for c in commands]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    base = tmp_path_factory.mktemp("readme")
    home = base / "home"
    for folder in ("notes", "papers", "code"):
        (home / folder).mkdir(parents=True)
    for name, text in NOTES.items():
        (home / "notes" / name).write_text(text)
    (home / "papers" / "paper.txt").write_text("HNSW recall depends on ef and M. " * 20)
    (home / "code" / "tool.py").write_text("def main():\n    return 42\n")
    (home / "code" / "blob.bin").write_bytes(b"\x00\x01" * 100)
    env = dict(os.environ, HOME=str(home), LOCALRAG_HOME=str(base / "data"),
               HF_HUB_OFFLINE="1", PYTHONPATH=str(ROOT))
    return env


def run(command: str, env: dict[str, str], timeout: float = 300) -> subprocess.CompletedProcess:
    argv = [os.path.expanduser(a).replace(os.path.expanduser("~"), env["HOME"])
            for a in shlex.split(command)]
    assert argv[0] == "localrag"
    return subprocess.run([sys.executable, "-m", "localrag", *argv[1:]], env=env,
                          capture_output=True, text=True, timeout=timeout)


def test_usage_block_lists_every_command() -> None:
    from localrag.cli import build_parser

    listed = {c.split()[1] for c in usage_commands() if len(c.split()) > 1}
    parser = build_parser()
    subcommands = set(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert subcommands <= listed | {"tui"}, f"README lacks: {subcommands - listed}"


@pytest.fixture(scope="module")
def hub(tiny_gguf):
    from models.catalogue import find_entry

    entry = find_entry("selfrag-7b")
    with HubServer() as server:
        server.state.add(entry.repo, entry.filename, tiny_gguf.read_bytes())
        yield server


def test_readme_commands_run(env: dict[str, str], hub: HubServer) -> None:
    commands = usage_commands()
    assert len(commands) >= 12
    outputs: dict[str, str] = {}
    pull_env = dict(env, HF_HUB_OFFLINE="0", HF_ENDPOINT=hub.endpoint,
                    NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    for command in commands:
        words = command.split()
        if words == ["localrag"] or words[1] == "tui":
            continue                          # the app: covered by the Pilot tests
        if words[1] == "watch":
            continue                          # covered below
        result = run(command, pull_env if words[1:3] == ["models", "pull"] else env)
        assert result.returncode == 0, f"{command}\n{result.stdout}\n{result.stderr}"
        outputs[command] = result.stdout
    # what the commands printed is what they promise
    status = json.loads(run("localrag status --json", env).stdout)
    # notes/ (3 files) stays; papers/ was removed by "roots --remove"; code/ was a dry run
    assert status["files_indexed"] == 3
    assert [r["path"].rsplit("/", 1)[-1] for r in status["roots"]] == ["notes"]
    assert "threshold = 0.3" in outputs["localrag settings --set threshold 0.3"]
    hits = json.loads(run('localrag search "aqueduct arch height" --json', env).stdout)
    assert hits and set(hits[0]) == {"path", "title", "start_line", "end_line", "page",
                                     "score", "text"}
    assert hits[0]["path"].endswith("aqueduct.md")
    dry = next(v for k, v in outputs.items() if "--dry-run" in k)
    assert "tool.py" in dry and "blob.bin" in dry
    pulled = outputs["localrag models pull --use"]
    assert "Installed" in pulled and "kind: selfrag" in pulled
    assert "It is the model in use" in pulled
    assert [r.method for r in hub.state.requests] == ["HEAD", "GET"]
    listed = run("localrag models", env).stdout          # after the pull, offline again
    assert "selfrag-7b:q4_k_m (default)" in listed and "installed, in use" in listed


def _start_watch_and_save(env: dict[str, str], name: str, text: str, query: str) -> subprocess.Popen:
    """`localrag watch` running over the indexed notes, and a new note `name` saved that a
    search for `query` finds (polled up to a minute)."""
    run(f"localrag index {env['HOME']}/notes", env)
    proc = subprocess.Popen([sys.executable, "-m", "localrag", "watch", "--debounce", "0.2"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=default_sigint)
    try:
        assert "Watching" in proc.stdout.readline()
        (Path(env["HOME"]) / "notes" / name).write_text(text)
        deadline = time.monotonic() + 60
        found = False
        while time.monotonic() < deadline and not found:
            hits = json.loads(run(f'localrag search "{query}" --json', env).stdout)
            found = bool(hits) and hits[0]["path"].endswith(name)
            time.sleep(0.5)
        assert found
    except BaseException:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
        raise
    return proc


def test_watch_reindexes_a_change(env: dict[str, str]) -> None:
    proc = _start_watch_and_save(env, "garden.md", "# Garden\n\nThe quince tree was planted in "
                                 "November 2019.\n", "quince tree planted")
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=30)


def test_watch_stopped_by_sigterm_saves_its_search_files(env: dict[str, str]) -> None:
    """`localrag watch` ended by SIGTERM (kill, systemd) stops as Ctrl-C does: exit 0, and the
    HNSW and BM25 files it keeps beside SQLite are written at the store's generation, so the
    next start loads them instead of repairing them. Before, SIGTERM killed it unsaved."""
    import sqlite3

    proc = _start_watch_and_save(env, "orchard.md", "# Orchard\n\nThe medlar tree was grafted "
                                 "in March 2021.\n", "medlar tree grafted")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert "Stopped watching." in out
    lexical = next(Path(env["LOCALRAG_HOME"]).rglob("lexical.json"))
    with sqlite3.connect(lexical.parent / "index.db") as conn:
        generation = int(conn.execute("SELECT value FROM meta WHERE key='generation'").fetchone()[0])
    assert json.loads(lexical.read_text())["generation"] == generation
    assert json.loads((lexical.parent / "vectors.json").read_text())["generation"] == generation
