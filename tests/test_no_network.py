"""No network, proved: `localrag index`, `search` and `ask` (the default SmolLM2 model)
run in subprocesses where every socket connection and name lookup fails loudly and is
recorded, and nothing tries one.

The guard is a `sitecustomize.py` on PYTHONPATH: Python imports it at start-up in every
interpreter (the CLI and anything it starts), and it installs a `sys.addaudithook` that
records and refuses the audit events of socket connections and name lookups. The
environment is scrubbed of HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE: the code must stay
offline by itself, not because the test asks the libraries to. Where unprivileged network
namespaces work (`unshare -rn`), the commands also run in one without any network, so
that native code (llama.cpp, tokenizers), which the audit hook cannot see, cannot reach
out either.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]

GUARD = '''
import os, sys, traceback

_LOG = os.environ["LOCALRAG_NET_LOG"]
_EVENTS = {"socket.connect", "socket.getaddrinfo", "socket.gethostbyname",
           "socket.gethostbyname_ex", "socket.gethostbyaddr", "socket.getnameinfo",
           "socket.sendto", "socket.sendmsg"}


def _guard(event, args):
    if event in _EVENTS:
        with open(_LOG, "a", encoding="utf-8") as fh:
            fh.write(f"pid {os.getpid()} {event} {args!r}\\n")
            fh.write("".join(traceback.format_stack(limit=15)) + "---\\n")
        raise ConnectionRefusedError(f"network blocked by the test: {event} {args!r}")


sys.addaudithook(_guard)
with open(os.environ["LOCALRAG_NET_GUARDED"], "a", encoding="utf-8") as fh:
    fh.write(f"{os.getpid()}\\n")
'''


def _unshare_prefix() -> list[str]:
    try:
        ok = subprocess.run(["unshare", "-rn", "true"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.SubprocessError):
        ok = False
    return ["unshare", "-rn"] if ok else []


@pytest.fixture(scope="module")
def guarded(tmp_path_factory):
    base = tmp_path_factory.mktemp("offline")
    guard_dir = base / "guard"
    guard_dir.mkdir()
    (guard_dir / "sitecustomize.py").write_text(GUARD)
    log, installed = base / "network.log", base / "guarded.pids"
    env = {k: v for k, v in os.environ.items()
           if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_DATASETS_OFFLINE")}
    env.update(PYTHONPATH=os.pathsep.join([str(guard_dir), str(ROOT)]),
               LOCALRAG_NET_LOG=str(log), LOCALRAG_NET_GUARDED=str(installed),
               LOCALRAG_HOME=str(base / "data"), HF_HOME=str(base / "hf-home"))
    return base, env, log, installed


def run(env, prefix, *args, timeout=600) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, sys.executable, "-m", *args], env=env, capture_output=True,
                          text=True, timeout=timeout)


def test_the_guard_catches_a_connection(guarded):
    """The check can fail: the same environment refuses and records a plain lookup."""
    base, env, log, installed = guarded
    for code, event in (("socket.create_connection(('example.org', 80), 2)", "socket.getaddrinfo"),
                        ("socket.socket().connect(('127.0.0.1', 9))", "socket.connect")):
        out = subprocess.run([sys.executable, "-c", f"import socket; {code}"], env=env,
                             capture_output=True, text=True, timeout=60)
        assert out.returncode != 0 and "network blocked by the test" in out.stderr
        assert f"{event} (" in log.read_text()
    assert installed.read_text().split()      # the guard ran in those interpreters
    log.unlink()
    installed.unlink()


def test_index_search_ask_never_touch_the_network(guarded):
    base, env, log, installed = guarded
    notes = base / "notes"
    notes.mkdir()
    (notes / "boat.md").write_text("# Boat\n\nThe sailing boat Kestrel is moored at pier 7 "
                                   "in Harwich harbour since April 2023.\n")
    (notes / "bread.txt").write_text("Rye bread needs a long cold proof of 14 hours.\n")
    prefix = _unshare_prefix()
    data = Path(env["LOCALRAG_HOME"])
    data.mkdir(parents=True, exist_ok=True)
    # a short answer keeps the test quick; the code paths are the same
    (data / "settings.toml").write_text("max_tokens = 32\nmax_segments = 2\nn_ctx = 1024\n")

    index = run(env, prefix, "localrag", "index", str(notes))
    assert index.returncode == 0, index.stderr
    search = run(env, prefix, "localrag", "search", "where is the boat moored", "--json")
    assert search.returncode == 0, search.stderr
    hits = json.loads(search.stdout)
    assert hits and hits[0]["path"] == str(notes / "boat.md")
    ask = run(env, prefix, "localrag", "ask", "Where is the sailing boat Kestrel moored?",
              "--json", "--mode", "always", "-k", "2")
    assert ask.returncode == 0, ask.stderr
    answer = json.loads(ask.stdout)
    assert answer["answer"].strip() and answer["sources"]
    assert "smollm2" in answer["model"].lower()

    assert not log.exists(), "a network call was tried:\n" + log.read_text()
    # the guard was live in each of the three commands
    assert len(installed.read_text().split()) >= 3
