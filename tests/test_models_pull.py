"""`localrag models pull` against a local stand-in for the Hugging Face Hub (no internet).

tests/hub_server.py serves a generated test GGUF on 127.0.0.1 with the hub's URL shapes
and headers; HF_ENDPOINT points the pull at it. The command-line tests run `localrag` in
a child process, as a person does (huggingface_hub reads HF_ENDPOINT / HF_HUB_OFFLINE /
proxies when it is imported); the others call the Assistant facade in this process,
where huggingface_hub was imported with HF_HUB_OFFLINE=1 and the default endpoint, which
the pull must (and does) get right anyway.
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

# huggingface_hub reads HF_HUB_OFFLINE and HF_ENDPOINT once, when imported: import it now,
# under tests/conftest.py's HF_HUB_OFFLINE=1 (as in localrag, where the Assistant sets it)
import huggingface_hub.constants  # noqa: E402,F401

from conftest_models import test_gguf_factory, tiny_gguf  # noqa: E402,F401  (fixtures)
from hub_server import HubServer, free_port  # noqa: E402
from models.catalogue import CATALOGUE, find_entry  # noqa: E402
from models.errors import ModelPullError, PullCancelled  # noqa: E402
from models.pull import CHUNK_BYTES, parse_source  # noqa: E402
from sigint import default_sigint  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = find_entry("selfrag-7b")
assert DEFAULT is not None
PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy",
              "all_proxy")


@pytest.fixture
def hub(tiny_gguf):
    with HubServer() as server:
        server.state.add(DEFAULT.repo, DEFAULT.filename, tiny_gguf.read_bytes())
        yield server


def child_env(hub: HubServer | None, tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in PROXY_VARS}
    env.update(PYTHONPATH=str(ROOT), HF_HUB_OFFLINE="0", HF_HOME=str(tmp_path / "hf-home"),
               NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    if hub is not None:
        env["HF_ENDPOINT"] = hub.endpoint
    env.update(extra)
    return env


NO_LOOKUP_GUARD = '''
import os, sys

_LOG = os.environ["LOCALRAG_NET_LOG"]
_LOOPBACK = {"127.0.0.1", "::1"}
_LOOKUPS = {"socket.getaddrinfo", "socket.gethostbyname", "socket.gethostbyname_ex",
            "socket.gethostbyaddr", "socket.getnameinfo"}


def _guard(event, args):
    if event in _LOOKUPS:
        host = args[0]
    elif event == "socket.connect":
        address = args[1]
        host = address[0] if isinstance(address, tuple) else None   # AF_UNIX: a path
    else:
        return
    if host is not None and str(host) not in _LOOPBACK:
        with open(_LOG, "a", encoding="utf-8") as fh:
            fh.write(f"pid {os.getpid()} {event} {args!r}\\n")
        raise ConnectionRefusedError(f"refused by the test: {event} {args!r}")


sys.addaudithook(_guard)
with open(os.environ["LOCALRAG_GUARD_ON"], "a", encoding="utf-8") as fh:
    fh.write(f"{os.getpid()}\\n")
'''


def guarded_env(env: dict[str, str], tmp_path: Path) -> dict[str, str]:
    """`env` with NO_LOOKUP_GUARD as the child's sitecustomize (Python imports it at
    start-up): any name lookup, or a connection to anything but numeric loopback, is
    refused and written to LOCALRAG_NET_LOG."""
    guard = tmp_path / "no-lookup-guard"
    guard.mkdir(exist_ok=True)
    (guard / "sitecustomize.py").write_text(NO_LOOKUP_GUARD, encoding="utf-8")
    log, on = guard / "net.log", guard / "guard-on.log"
    log.write_text("")
    on.write_text("")
    return dict(env, PYTHONPATH=os.pathsep.join([str(guard), env.get("PYTHONPATH", str(ROOT))]),
                LOCALRAG_NET_LOG=str(log), LOCALRAG_GUARD_ON=str(on))


def localrag(data: Path, *args: str, env: dict[str, str],
             timeout: float = 240) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "localrag", "--data-dir", str(data), *args],
                          env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT)


def models_dir_names(data: Path) -> list[str]:
    """The files in DATA/models a person sees (the hidden per-file pull locks aside)."""
    folder = data / "models"
    return sorted(p.name for p in folder.iterdir()
                  if not p.name.startswith(".")) if folder.is_dir() else []


# -- the command line, in child processes --------------------------------------------------------

def test_pull_downloads_checks_selects_and_the_model_answers(hub, tiny_gguf, tmp_path,
                                                            embedder):
    data = tmp_path / "data"
    env = child_env(hub, tmp_path)
    result = localrag(data, "models", "pull", "selfrag-7b", "--use", env=env)
    assert result.returncode == 0, result.stderr
    installed = data / "models" / DEFAULT.filename
    assert installed.read_bytes() == tiny_gguf.read_bytes()
    assert models_dir_names(data) == [DEFAULT.filename]          # no .part left behind
    out = result.stdout
    assert f"Pulling {DEFAULT.name} ({DEFAULT.repo}/{DEFAULT.filename}) from {hub.endpoint}" in out
    assert f"Installed {installed}" in out and "kind: selfrag" in out
    assert "It is the model in use" in out
    # the progress bar (stderr is not a terminal here: one line per 10%) with size and speed
    bar = [line for line in result.stderr.splitlines() if line.startswith("[")]
    transfer = [line for line in bar if line.endswith("/s") or " left" in line]
    assert transfer and "] 100%  17.4 MB of 17.4 MB  " in transfer[-1]
    assert bar[-2:] == ["[########################] 100%  17.4 MB of 17.4 MB  checking the "
                        "SHA-256 checksum", "[########################] 100%  17.4 MB of "
                        "17.4 MB  done"]
    # exactly the hub's HEAD and the CDN's GET: no other request (no telemetry)
    assert [(r.server, r.method) for r in hub.state.requests] == [("hub", "HEAD"), ("cdn", "GET")]
    assert hub.state.requests[0].path == f"/{DEFAULT.repo}/resolve/main/{DEFAULT.filename}"

    # `localrag models` now lists it as installed and in use
    listing = json.loads(localrag(data, "models", "--json", env=env).stdout)
    state = next(s for s in listing["catalogue"] if s["name"] == DEFAULT.name)
    assert state["installed"] and state["in_use"] and state["size_bytes"] == installed.stat().st_size
    assert listing["in_use"] == str(installed.resolve())

    # end to end: the Assistant over this data directory (its settings, as the CLI left
    # them) answers with the downloaded model, citing an indexed note
    from localrag.assistant import Assistant

    notes = tmp_path / "notes"
    notes.mkdir()
    (notes / "server.md").write_text("# Home server\n\nWe moved the home server to the "
                                     "basement on 12 March 2024.\n")
    overrides = {"retrieval_mode": "always", "max_tokens": 24, "max_segments": 2,
                 "n_threads": 1}
    with Assistant.open(data, overrides=overrides, embedder=embedder) as assistant:
        assert assistant.settings.model_path == str(installed.resolve())
        assistant.add_root(notes)
        assistant.update_index()
        answer = assistant.ask("When did we move the server?")
        described = assistant.load_model()
    assert described.path == str(installed.resolve()) and described.kind == "selfrag"
    assert answer.model == "selfrag-test-tiny-f32"            # the pulled file, by its name
    assert answer.critic == "selfrag" and answer.decision.retrieved
    assert answer.passages[0].passage.path == str((notes / "server.md").resolve())
    # the tiny model has random weights: within 24 tokens it rarely ends a sentence, and
    # an unfinished last sentence is left out (never half a sentence), with a note
    cut = any("unfinished last sentence was left out" in n for n in answer.notes)
    assert (answer.segments and answer.text) or cut, answer.notes


def test_ctrl_c_keeps_the_part_and_the_next_pull_resumes(hub, tiny_gguf, tmp_path):
    data = tmp_path / "data"
    stall_at = 5_000_000
    hub.state.stall_after = stall_at
    proc = subprocess.Popen(
        [sys.executable, "-m", "localrag", "--data-dir", str(data), "models", "pull"],
        env=child_env(hub, tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True, cwd=ROOT, preexec_fn=default_sigint)
    part = data / "models" / (DEFAULT.filename + ".part")
    try:
        deadline = time.monotonic() + 120
        # the client writes whole 1 MiB reads: wait until all it received is on disk
        written = (stall_at // CHUNK_BYTES) * CHUNK_BYTES
        while time.monotonic() < deadline:
            if part.is_file() and part.stat().st_size >= written:
                break
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        else:
            pytest.fail("the download did not start")
        proc.send_signal(signal.SIGINT)                      # Ctrl+C
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert f"stopped at 4.2 MB of 17.4 MB; the part is kept in {part}" in err
    assert "run `localrag models pull selfrag-7b` again to resume" in err
    kept = part.stat().st_size
    assert kept == written
    assert part.read_bytes() == tiny_gguf.read_bytes()[:kept]     # a clean prefix
    assert not (data / "models" / DEFAULT.filename).exists()      # no half file as a model

    hub.state.stall_after = None
    hub.state.release.set()
    hub.state.requests.clear()
    result = localrag(data, "models", "pull", env=child_env(hub, tmp_path))
    assert result.returncode == 0, result.stderr
    assert f"resumed after {kept / 1e6:.1f} MB" in result.stdout
    gets = [r for r in hub.state.requests if r.method == "GET"]
    assert [g.range for g in gets] == [f"bytes={kept}-"]
    assert (data / "models" / DEFAULT.filename).read_bytes() == tiny_gguf.read_bytes()
    assert models_dir_names(data) == [DEFAULT.filename]


def test_offline_refusals_open_no_connection(hub, tmp_path):
    data = tmp_path / "data"
    env = child_env(hub, tmp_path, HF_HUB_OFFLINE="1")
    refused = localrag(data, "models", "pull", "selfrag-7b", env=env)
    assert refused.returncode == 2
    assert ("localrag: Not downloading selfrag-7b:q4_k_m (m4r1/selfrag_llama2_7b-GGUF/"
            "selfrag_llama2_7b.q4_k_m.gguf): localrag is offline (HF_HUB_OFFLINE=1 is set)."
            ) in refused.stderr
    assert "env -u HF_HUB_OFFLINE localrag models pull selfrag-7b" in refused.stderr
    flagged = localrag(data, "models", "pull", "--offline", "selfrag-7b",
                       env=child_env(hub, tmp_path))
    assert flagged.returncode == 2 and "offline (--offline was given)" in flagged.stderr
    assert hub.state.requests == []                       # not even a HEAD
    assert models_dir_names(data) == []
    assert "Traceback" not in refused.stderr + flagged.stderr


def test_refused_connection_and_broken_proxy_are_messages(tmp_path):
    data = tmp_path / "data"
    port = free_port()
    env = child_env(None, tmp_path, HF_ENDPOINT=f"http://127.0.0.1:{port}")
    refused = localrag(data, "models", "pull", "selfrag-7b", env=env)
    assert refused.returncode == 2
    assert (f"localrag: Cannot connect to 127.0.0.1:{port} (HF_ENDPOINT=http://127.0.0.1:{port}"
            "): the connection was refused.") in refused.stderr
    assert "check HF_ENDPOINT or the URL" in refused.stderr

    # Through a dead proxy to a host that must never be looked up: the child runs under a
    # guard (NO_LOOKUP_GUARD) that refuses and records every name lookup and connection
    # other than to numeric loopback, so a pull that bypassed the proxy (or resolved the
    # host itself) makes no DNS query and fails this test, instead of passing because a
    # failed lookup reads like a failed proxy.
    proxy = f"http://127.0.0.1:{free_port()}"
    env = guarded_env(child_env(None, tmp_path, HF_ENDPOINT="http://models.example.invalid",
                                HTTP_PROXY=proxy, HTTPS_PROXY=proxy, NO_PROXY="", no_proxy=""),
                      tmp_path)
    broken = localrag(data, "models", "pull", "selfrag-7b", env=env)
    assert Path(env["LOCALRAG_GUARD_ON"]).read_text().strip(), "the guard did not load"
    assert Path(env["LOCALRAG_NET_LOG"]).read_text() == ""      # no lookup, no direct connect
    assert broken.returncode == 2
    assert f"localrag: The proxy {proxy} failed while connecting to models.example.invalid" \
        in broken.stderr
    assert "check HTTPS_PROXY / HTTP_PROXY / ALL_PROXY" in broken.stderr
    assert "Traceback" not in refused.stderr + broken.stderr
    assert models_dir_names(data) == []


# -- through the Assistant, in this process ---------------------------------------------------------

@pytest.fixture
def online(hub, monkeypatch, tmp_path):
    """This process may pull from the local hub (the person did not ask for offline)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    for var in PROXY_VARS:
        monkeypatch.delenv(var, raising=False)
    return hub


@pytest.fixture
def assistant(tmp_path):
    from localrag.assistant import Assistant

    with Assistant.open(tmp_path / "data") as a:
        yield a


def test_in_process_pull_is_not_blocked_by_the_import_time_offline_switch(online, assistant,
                                                                          tiny_gguf):
    from huggingface_hub import constants

    assert constants.HF_HUB_OFFLINE           # imported offline (tests/conftest.py)
    seen = []
    result = assistant.pull_model("selfrag-7b:q4_k_m", progress=seen.append)
    assert result.path.read_bytes() == tiny_gguf.read_bytes()
    assert constants.HF_HUB_OFFLINE           # and offline again afterwards
    phases = [p.phase for p in seen]
    assert phases[0] == "connecting" and phases[-1] == "done" and "verifying" in phases
    assert seen[-1].done_bytes == seen[-1].total_bytes == tiny_gguf.stat().st_size
    again = assistant.pull_model("selfrag-7b")
    assert again.already_installed and again.downloaded_bytes == 0
    assert [r.method for r in online.state.requests].count("GET") == 1


def test_wrong_size_is_refused_and_nothing_is_kept(online, assistant):
    online.state.announce[(DEFAULT.repo, DEFAULT.filename)] = 17_500_000
    with pytest.raises(ModelPullError) as caught:
        assistant.pull_model("selfrag-7b")
    assert "the source announced 17.5 MB (17500000 bytes) but sent 17446784 bytes; " \
        "nothing was kept." in str(caught.value)
    assert models_dir_names(assistant.paths.data_dir) == []


def test_damaged_bytes_fail_the_checksum(online, assistant, tiny_gguf):
    data = tiny_gguf.read_bytes()
    sha = hashlib.sha256(data).hexdigest()
    online.state.serve[sha] = data[:-1] + bytes([data[-1] ^ 0xFF])   # same size, one bit off
    with pytest.raises(ModelPullError, match="does not match the SHA-256 checksum"):
        assistant.pull_model("selfrag-7b")
    assert models_dir_names(assistant.paths.data_dir) == []


def test_a_file_that_is_not_a_gguf_is_refused(online, assistant):
    online.state.add("someone/pages", "model.gguf", b"<!DOCTYPE html><html>Sign in</html>\n" * 40)
    with pytest.raises(ModelPullError) as caught:
        assistant.pull_model("someone/pages/model.gguf")
    assert "is not a GGUF model file: it starts with '<!DOCTYPE html><html>Sig'" in str(caught.value)
    assert "It was deleted." in str(caught.value)
    assert models_dir_names(assistant.paths.data_dir) == []


def test_a_catalogue_entry_must_be_what_it_claims(online, assistant, test_gguf_factory,
                                                  tmp_path):
    q8 = find_entry("selfrag-7b:q8_0")
    online.state.add(q8.repo, q8.filename, test_gguf_factory(reflection="partial").read_bytes())
    with pytest.raises(ModelPullError) as caught:
        assistant.pull_model("selfrag-7b:q8_0")
    assert "is a GGUF file but not a selfrag model: incomplete reflection vocabulary" \
        in str(caught.value)
    # another architecture (a metadata-only GGUF with the whole Self-RAG vocabulary)
    import gguf
    from models.reflection import ALL_TOKENS

    other = tmp_path / "qwen2.gguf"
    writer = gguf.GGUFWriter(str(other), "qwen2")
    writer.add_token_list(list(ALL_TOKENS))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    q5 = find_entry("selfrag-7b:q5_k_m")
    online.state.add(q5.repo, q5.filename, other.read_bytes())
    with pytest.raises(ModelPullError, match="for the qwen2 architecture, not llama"):
        assistant.pull_model("selfrag-7b:q5_k_m")
    assert models_dir_names(assistant.paths.data_dir) == []


def test_http_401_and_404_name_the_cause_and_the_fix(online, assistant):
    with pytest.raises(ModelPullError) as missing_repo:
        assistant.pull_model("nobody/nothing/x.gguf")
    text = str(missing_repo.value)
    assert "Access to nobody/nothing/x.gguf was refused (HTTP 401)" in text
    assert "does not exist, or is private or gated" in text and "hf auth login" in text
    with pytest.raises(ModelPullError) as missing_file:
        assistant.pull_model(f"{DEFAULT.repo}/nope.gguf")
    text = str(missing_file.value)
    assert f"{DEFAULT.repo} has no file nope.gguf (HTTP 404)" in text
    assert f"{online.endpoint}/{DEFAULT.repo}/tree/main" in text


def test_a_direct_url_downloads_and_is_checked(online, assistant, tiny_gguf):
    sha = hashlib.sha256(tiny_gguf.read_bytes()).hexdigest()
    result = assistant.pull_model(f"{online.cdn_origin}/blobs/{sha}/tiny-selfrag.gguf")
    assert result.path.name == "tiny-selfrag.gguf" and result.info.kind == "selfrag"
    with pytest.raises(ModelPullError, match="Nothing at .* \\(HTTP 404\\)"):
        assistant.pull_model(f"{online.cdn_origin}/blobs/{'0' * 64}/missing.gguf")


def test_too_little_disk_space_is_said_before_the_download(online, assistant):
    online.state.announce[(DEFAULT.repo, DEFAULT.filename)] = 10**15           # 1 PB
    with pytest.raises(ModelPullError) as caught:
        assistant.pull_model("selfrag-7b")
    assert "Not enough disk space for selfrag-7b:q4_k_m" in str(caught.value)
    assert "1000000.00 GB" in str(caught.value) and "--data-dir" in str(caught.value)
    assert [r.server for r in online.state.requests] == ["hub"]    # nothing was fetched


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs Linux's /dev/full")
def test_a_full_disk_during_the_download_is_a_message(online, assistant):
    # /dev/full answers every write with ENOSPC: the kernel's own "disk full"
    models = assistant.paths.models_dir
    models.mkdir(parents=True)
    (models / (DEFAULT.filename + ".part")).symlink_to("/dev/full")
    with pytest.raises(ModelPullError) as caught:
        assistant.pull_model("selfrag-7b")
    assert "The disk is full: cannot write the model into" in str(caught.value)
    assert "free some space and run the pull again (it resumes)" in str(caught.value)
    assert not (models / DEFAULT.filename).exists()


def test_a_stale_part_from_another_version_is_not_resumed(online, assistant, tiny_gguf):
    models = assistant.paths.models_dir
    models.mkdir(parents=True)
    part = models / (DEFAULT.filename + ".part")
    part.write_bytes(b"GGUF old version " * 1000)
    (models / (DEFAULT.filename + ".part.json")).write_text(json.dumps(
        {"url": f"{online.endpoint}/{DEFAULT.repo}/resolve/main/{DEFAULT.filename}",
         "size": tiny_gguf.stat().st_size, "etag": "f" * 64}))
    result = assistant.pull_model("selfrag-7b")
    assert result.resumed_from == 0
    assert result.path.read_bytes() == tiny_gguf.read_bytes()
    assert [r.range for r in online.state.requests if r.method == "GET"] == [None]


def test_cancel_keeps_the_part_and_a_second_pull_resumes(online, assistant, tiny_gguf):
    """What the app's Cancel button does: an Event, seen before each 1 MiB write."""
    cancel = threading.Event()
    online.state.stall_after = 3_000_000
    outcome: list[BaseException] = []

    def run() -> None:
        try:
            assistant.pull_model("selfrag-7b", cancel=cancel)
        except BaseException as exc:          # noqa: BLE001 - handed to the test thread
            outcome.append(exc)

    worker = threading.Thread(target=run)
    worker.start()
    part = assistant.paths.models_dir / (DEFAULT.filename + ".part")
    deadline = time.monotonic() + 60
    while not (part.is_file() and part.stat().st_size >= 2 * CHUNK_BYTES):
        assert time.monotonic() < deadline and worker.is_alive()
        time.sleep(0.02)
    cancel.set()
    online.state.stall_after = None
    online.state.release.set()                # more bytes come: the next write sees Cancel
    worker.join(60)
    assert len(outcome) == 1 and isinstance(outcome[0], PullCancelled), outcome
    assert "the part is kept" in str(outcome[0])
    kept = part.stat().st_size
    assert kept % CHUNK_BYTES == 0 and 2 * CHUNK_BYTES <= kept < tiny_gguf.stat().st_size
    result = assistant.pull_model("selfrag-7b", use=True)
    assert result.resumed_from == kept
    assert result.path.read_bytes() == tiny_gguf.read_bytes()
    assert assistant.settings.model_path == str(result.path)


def test_the_listing_shows_partial_downloads_and_space(online, assistant):
    models = assistant.paths.models_dir
    models.mkdir(parents=True)
    (models / (DEFAULT.filename + ".part")).write_bytes(b"G" * 1000)
    overview = assistant.models_overview()
    by_name = {s.entry.name: s for s in overview.catalogue}
    assert [s.entry.name for s in overview.catalogue] == [e.name for e in CATALOGUE]
    assert by_name[DEFAULT.name].partial_bytes == 1000
    assert "pull again to resume" in by_name[DEFAULT.name].state
    assert by_name["selfrag-7b:q8_0"].state == "not installed"
    assert overview.free_bytes and overview.free_bytes > 0
    squeezed = type(overview)(**{**vars(overview), "free_bytes": 5 * 10**9})
    assert [w.split(" (")[0].rsplit(" ", 1)[-1] for w in squeezed.space_warnings()] == [
        "selfrag-7b:q8_0"]


# -- parsing what the person typed ----------------------------------------------------------------

def test_sources_are_parsed_or_refused_with_a_fix():
    assert parse_source(None).entry == DEFAULT
    assert parse_source("SELFRAG-7B:Q8_0").entry == find_entry("selfrag-7b:q8_0")
    s = parse_source("owner/repo/sub/dir/model.Q4_K_M.gguf")
    assert (s.repo, s.path_in_repo, s.filename) == ("owner/repo", "sub/dir/model.Q4_K_M.gguf",
                                                    "model.Q4_K_M.gguf")
    u = parse_source("https://example.org/files/my%20model.gguf")
    assert (u.url, u.filename) == ("https://example.org/files/my%20model.gguf", "my model.gguf")
    for bad, words in [("selfrag-13b", "No model called"), ("owner/repo", "names a repository"),
                       ("owner/repo/model.bin", "does not name a .gguf file"),
                       ("http://example.org/m.gguf", "unencrypted"),
                       ("ftp://example.org/m.gguf", "not an https:// address")]:
        with pytest.raises(ModelPullError, match=words):
            parse_source(bad)


def test_two_pulls_of_one_file_do_not_share_the_part(online, assistant):
    from filelock import FileLock

    models = assistant.paths.models_dir
    models.mkdir(parents=True)
    with FileLock(str(models / f".{DEFAULT.filename}.pull.lock")):   # another process
        with pytest.raises(ModelPullError, match="Another localrag is downloading"):
            assistant.pull_model("selfrag-7b")
    assert online.state.requests == []
