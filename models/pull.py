"""Download a model file: `localrag models pull` (the only code that opens a connection).

huggingface_hub does the HTTP: a HEAD request for what the source publishes (size, ETag,
commit, the CDN location), then a GET that resumes with a Range header, retries
transient failures and honours HTTPS_PROXY / HTTP_PROXY / ALL_PROXY / NO_PROXY and a
custom hub address (the `endpoint`, from HF_ENDPOINT). Around it this module keeps
localrag's promises:

- The bytes go to `FILE.part` in the models folder, with `FILE.part.json` naming the
  source and its ETag. Only the finished, checked file is renamed (atomically, same
  folder) to `FILE`, so no half or unchecked file ever carries a model's name. An
  interrupted pull (Ctrl+C, Cancel, a dropped connection, a crash) resumes from the
  `.part` file when the source still publishes the same ETag and size.
- The check before the rename: the size against what the source announced, the SHA-256
  against the hub's ETag when the ETag is one (large files on the hub), then the checks
  of `localrag models FILE` (models/inspect.py): a GGUF file, its architecture, and a
  kind localrag can run (a catalogue entry must be what it claims: Self-RAG).
- Every failure is a ModelPullError naming the cause and the fix.

Why not `hf_hub_download`: since huggingface_hub 2.x it downloads to a temporary file
unique to the process and deletes it on any failure, so nothing resumes across runs;
`get_hf_file_metadata` + `http_get(resume_size=...)` are the same library's pieces.

huggingface_hub reads HF_HUB_OFFLINE once, at import; localrag sets it (see
localrag/network.py) so that nothing else can reach the network. The caller decides
whether the person allowed this pull; `pull` then lifts the library's offline switch
for its own requests only, one pull at a time.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import shutil
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from models.catalogue import format_size as _size
from models.errors import ModelFileError, ModelPullError, PullCancelled
from models.inspect import ModelFileInfo, inspect_gguf
from models.pull_errors import disk_error, explain_network_error, is_http_error
from models.pull_source import PullSource, default_endpoint, parse_source

__all__ = ["PullProgress", "PullResult", "PullSource", "default_endpoint", "parse_source",
           "partial_bytes", "part_path", "pull"]

CHUNK_BYTES = 1 << 20
"""Bytes per read: progress and Cancel are seen at least once per MiB (huggingface_hub's
own default, 10 MiB, would make Cancel wait for up to 10 MiB on a slow line)."""
SPACE_MARGIN_BYTES = 50_000_000
"""Free space kept beyond the file itself (the settings file, the index, logs)."""
REPORT_INTERVAL_S = 0.1
SPEED_WINDOW_S = 5.0
_SHA256 = re.compile(r"^[0-9a-f]{64}$")

_one_pull = threading.Lock()


# -- progress ---------------------------------------------------------------------------------

@dataclass(frozen=True)
class PullProgress:
    """Where a pull stands; `phase`: connecting, downloading, verifying or done."""

    phase: str
    source: PullSource
    done_bytes: int = 0
    total_bytes: int | None = None
    resumed_from: int = 0           # bytes that were already there from an earlier pull
    speed_bps: float = 0.0          # over the last few seconds
    elapsed_s: float = 0.0

    @property
    def filename(self) -> str:
        return self.source.filename

    @property
    def fraction(self) -> float | None:
        return self.done_bytes / self.total_bytes if self.total_bytes else None

    @property
    def eta_s(self) -> float | None:
        if not self.total_bytes or self.speed_bps <= 0:
            return None
        return max(self.total_bytes - self.done_bytes, 0) / self.speed_bps


ProgressCallback = Callable[[PullProgress], None]


class _Meter:
    """Counts bytes, reports speed and ETA, and stops the transfer on cancel.

    huggingface_hub's http_get takes a tqdm-like class; an instance of this one (through
    functools.partial, which the library accepts) gets `update(n)` before each chunk is
    written, so raising PullCancelled there leaves the .part file a clean prefix."""

    def __init__(self, state: "_Transfer", **kwargs: Any) -> None:
        self.state = state
        state.total = state.total or kwargs.get("total")    # the announced size wins
        self.n = int(kwargs.get("initial") or 0)

    def update(self, n: float | None = 1) -> bool:
        self.n += int(n or 0)
        self.state.advance(self.n, "downloading")
        return True

    def update_transfer(self, n: int) -> None:    # called by the library; counted in update
        pass

    def close(self) -> None:
        pass

    def set_description(self, *args: Any, **kwargs: Any) -> None:
        pass

    def __enter__(self) -> "_Meter":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Transfer:
    def __init__(self, source: PullSource, progress: ProgressCallback | None,
                 cancel: threading.Event | None) -> None:
        self.source = source
        self.progress = progress
        self.cancel = cancel
        self.total: int | None = None
        self.resumed_from = 0
        self.done = 0
        self.start = time.monotonic()
        self.samples: deque[tuple[float, int]] = deque()
        self.last_report = 0.0

    def check_cancel(self) -> None:
        if self.cancel is not None and self.cancel.is_set():
            raise PullCancelled("cancelled")          # the message is written by `pull`

    def advance(self, done: int, phase: str, *, force: bool = False) -> None:
        self.check_cancel()
        now = time.monotonic()
        self.done = done
        if phase == "downloading":
            self.samples.append((now, done))
            while len(self.samples) > 2 and now - self.samples[0][0] > SPEED_WINDOW_S:
                self.samples.popleft()
        if force or now - self.last_report >= REPORT_INTERVAL_S:
            self.last_report = now
            self.report(phase)

    def speed(self) -> float:
        if len(self.samples) < 2:
            return 0.0
        (t0, b0), (t1, b1) = self.samples[0], self.samples[-1]
        return (b1 - b0) / (t1 - t0) if t1 > t0 else 0.0

    def report(self, phase: str) -> None:
        if self.progress is not None:
            self.progress(PullProgress(
                phase=phase, source=self.source, done_bytes=self.done,
                total_bytes=self.total, resumed_from=self.resumed_from,
                speed_bps=self.speed() if phase == "downloading" else 0.0,
                elapsed_s=time.monotonic() - self.start))


# -- the result --------------------------------------------------------------------------------

@dataclass
class PullResult:
    source: PullSource
    path: Path
    info: ModelFileInfo
    downloaded_bytes: int           # bytes transferred by this pull
    resumed_from: int               # bytes kept from an earlier, interrupted pull
    elapsed_s: float
    already_installed: bool = False
    replaced: bool = False          # an older file of the same name was replaced


@dataclass(frozen=True)
class _Remote:
    url: str                # what was asked for
    download_url: str       # where the bytes are (a CDN after the hub's redirect)
    size: int | None
    etag: str | None
    commit: str | None


# -- pulling -----------------------------------------------------------------------------------

def part_path(models_dir: Path, filename: str) -> Path:
    """Where an unfinished download of `filename` lives."""
    return Path(models_dir) / (filename + ".part")


def partial_bytes(models_dir: Path, filename: str) -> int:
    """Bytes of an unfinished download of `filename` (0 when there is none)."""
    try:
        return part_path(models_dir, filename).stat().st_size
    except OSError:
        return 0


def pull(source: PullSource, models_dir: Path, *, endpoint: str | None = None,
         progress: ProgressCallback | None = None,
         cancel: threading.Event | None = None) -> PullResult:
    """Download `source` into `models_dir`, check it, and rename it into place.

    Resumes an earlier partial download of the same file. Raises ModelPullError
    (PullCancelled when `cancel` was set or Ctrl+C was pressed)."""
    if not _one_pull.acquire(blocking=False):
        raise ModelPullError("Another model download is running in this program.",
                             hint="wait for it to finish or cancel it first")
    try:
        return _pull(source, Path(models_dir), endpoint or default_endpoint(), progress, cancel)
    finally:
        _one_pull.release()


def _pull(source: PullSource, models_dir: Path, endpoint: str,
          progress: ProgressCallback | None, cancel: threading.Event | None) -> PullResult:
    start = time.monotonic()
    state = _Transfer(source, progress, cancel)
    final = models_dir / source.filename
    part = part_path(models_dir, source.filename)
    record = part.with_name(part.name + ".json")
    try:
        models_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise disk_error(exc, models_dir, None) from exc
    from filelock import FileLock, Timeout

    lock = FileLock(str(models_dir / f".{source.filename}.pull.lock"))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise ModelPullError(
            f"Another localrag is downloading {source.filename} into {models_dir} now.",
            hint="wait for it to finish (or stop it), then run the pull again") from None
    try:
        return _pull_locked(source, models_dir, endpoint, state, start, final, part, record)
    finally:
        lock.release()


def _pull_locked(source: PullSource, models_dir: Path, endpoint: str, state: _Transfer,
                 start: float, final: Path, part: Path, record: Path) -> PullResult:
    url = source.resolve_url(endpoint)
    state.report("connecting")
    remote = _ask_source(source, url, endpoint, state)
    state.total = remote.size

    if final.is_file() and remote.size is not None and final.stat().st_size == remote.size:
        info = inspect_gguf(final)       # the person's file: described, never deleted
        state.done = remote.size
        state.report("done")
        return PullResult(source, final.resolve(), info, 0, 0, time.monotonic() - start,
                          already_installed=True)

    resume = _resumable_bytes(part, record, remote)
    state.resumed_from = state.done = resume
    if remote.size is not None:
        _check_space(models_dir, remote.size - resume, remote.size, source)
    try:
        record.write_text(json.dumps({**asdict(remote), "source": source.text}),
                          encoding="utf-8")
        with part.open("ab" if resume else "wb") as f:
            _download(source, remote, f, resume, state, endpoint)
    except PullCancelled:
        raise _cancelled(source, part, remote) from None
    except KeyboardInterrupt:
        raise _cancelled(source, part, remote) from None
    except OSError as exc:
        if "Consistency check failed" in str(exc):
            got = partial_bytes(models_dir, source.filename)
            _discard(part, record)
            raise ModelPullError(
                f"{source.described}: the source announced {_size(remote.size)} "
                f"({remote.size} bytes) but sent {got} bytes; nothing was kept.",
                hint="run the pull again later; if it keeps failing the source is broken: "
                "pick another conversion (localrag models lists them)") from None
        raise disk_error(exc, models_dir, remote.size) from None
    downloaded = partial_bytes(models_dir, source.filename) - resume

    info = _verify(source, part, record, remote, state)
    replaced = final.exists()
    try:
        os.replace(part, final)
    except OSError as exc:
        raise ModelPullError(f"Cannot move the checked download to {final}: {exc}",
                             hint=f"check the permissions of {models_dir}") from exc
    record.unlink(missing_ok=True)
    info.path = final.resolve()
    state.done = info.size_bytes
    state.report("done")
    return PullResult(source, final.resolve(), info, downloaded, resume,
                      time.monotonic() - start, replaced=replaced)


_HUB_SETTINGS = {
    "HF_HUB_OFFLINE": False,            # the caller checked that the person allows this pull
    "HF_HUB_DISABLE_TELEMETRY": True,   # else building the headers fetches an "agent
                                        # harness" registry from the endpoint (2.x)
    "DOWNLOAD_CHUNK_SIZE": CHUNK_BYTES,
}


@contextmanager
def _hub_online() -> Iterator[None]:
    """huggingface_hub set up for this pull's requests only, and nothing more: online,
    no telemetry requests, 1 MiB reads; the process's settings come back afterwards."""
    import logging

    from huggingface_hub import constants

    saved = {name: getattr(constants, name) for name in _HUB_SETTINGS}
    for name, value in _HUB_SETTINGS.items():
        setattr(constants, name, value)
    # its "retrying / resuming" warnings would scribble over the progress bar (and the
    # app's screen); a retry that fails in the end reaches the person as our message
    hub_log = logging.getLogger("huggingface_hub")
    level = hub_log.level
    hub_log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for name, value in saved.items():
            setattr(constants, name, value)
        hub_log.setLevel(level)


def _token(source: PullSource) -> bool | None:
    # None: the person's Hugging Face login (HF_TOKEN or `hf auth login`), for gated hub
    # repositories; never sent with a direct URL to some other server.
    return False if source.url is not None else None


def _ask_source(source: PullSource, url: str, endpoint: str, state: _Transfer) -> _Remote:
    from huggingface_hub import get_hf_file_metadata

    try:
        with _hub_online():
            meta = get_hf_file_metadata(url, token=_token(source), endpoint=endpoint)
            size = meta.size
            location = meta.location or url
            if size is None and location != url:
                # a direct URL that redirects elsewhere: the size is on the final answer
                size = get_hf_file_metadata(location, token=False).size
    except KeyboardInterrupt:
        raise PullCancelled(f"Stopped {source.described} before the download began.",
                            hint="run the same command again") from None
    except Exception as exc:
        raise explain_network_error(exc, source, url, endpoint) from None
    state.check_cancel()
    return _Remote(url=url, download_url=location, size=size, etag=meta.etag,
                   commit=meta.commit_hash)


def _download(source: PullSource, remote: _Remote, f: Any, resume: int, state: _Transfer,
              endpoint: str) -> None:
    from huggingface_hub.file_download import http_get
    from huggingface_hub.utils import build_hf_headers

    same_host = urlsplit(remote.url).netloc == urlsplit(remote.download_url).netloc
    meter = functools.partial(_Meter, state)
    try:
        with _hub_online():
            headers = build_hf_headers(token=_token(source) if same_host else False)
            http_get(remote.download_url, f, resume_size=resume, headers=headers,
                     expected_size=remote.size, displayed_filename=source.filename,
                     tqdm_class=meter)     # type: ignore[arg-type]
    except (PullCancelled, KeyboardInterrupt):
        raise
    except OSError as exc:
        if is_http_error(exc):
            raise explain_network_error(exc, source, remote.download_url, endpoint) from None
        raise
    except Exception as exc:
        raise explain_network_error(exc, source, remote.download_url, endpoint) from None
    state.advance(f.tell(), "downloading", force=True)


def _resumable_bytes(part: Path, record: Path, remote: _Remote) -> int:
    """Bytes of `part` that belong to the file the source publishes now (0: start over)."""
    have = part.stat().st_size if part.is_file() else 0
    if not have:
        return 0
    try:
        old = json.loads(record.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return 0
    same = (old.get("url") == remote.url and old.get("size") == remote.size
            and old.get("etag") == remote.etag and (remote.etag or remote.size))
    if not same or (remote.size is not None and have > remote.size):
        return 0
    return have


def _verify(source: PullSource, part: Path, record: Path, remote: _Remote,
            state: _Transfer) -> ModelFileInfo:
    size = part.stat().st_size
    if remote.size is not None and size != remote.size:
        _discard(part, record)
        raise ModelPullError(
            f"{source.described}: the download has {size} bytes, the source announced "
            f"{remote.size}; nothing was kept.", hint="run the pull again")
    if remote.etag and _SHA256.match(remote.etag):
        digest = hashlib.sha256()
        done = 0
        state.report("verifying")
        try:
            with part.open("rb") as f:
                while block := f.read(CHUNK_BYTES * 4):
                    digest.update(block)
                    done += len(block)
                    state.advance(done, "verifying")
        except KeyboardInterrupt:
            raise _cancelled(source, part, remote) from None
        except PullCancelled:
            raise _cancelled(source, part, remote) from None
        if digest.hexdigest() != remote.etag:
            _discard(part, record)
            raise ModelPullError(
                f"{source.described}: the download does not match the SHA-256 checksum the "
                f"source publishes (expected {remote.etag[:12]}…, got "
                f"{digest.hexdigest()[:12]}…); it was deleted.",
                hint="run the pull again; if it fails again the source or a proxy in between "
                "is damaging the file")
    try:
        info = inspect_gguf(part)
    except ModelFileError as exc:
        head = _head_text(part)
        _discard(part, record)
        what = (f"a damaged GGUF file ({exc.message.replace(str(part), 'the download')})"
                if head.startswith("GGUF") else
                f"not a GGUF model file: it starts with {head!r}")
        raise ModelPullError(
            f"What {source.described} sent is {what}. It was deleted.",
            hint="pick a file in GGUF format (llama.cpp); for OWNER/REPO/FILE.gguf check "
            "the name in the repository's file list") from None
    try:
        return _check_kind(source, part, info)
    except ModelPullError:
        _discard(part, record)
        raise


def _check_kind(source: PullSource, path: Path, info: ModelFileInfo) -> ModelFileInfo:
    entry = source.entry
    if entry is not None and info.architecture != entry.architecture:
        raise ModelPullError(
            f"{source.described} is a GGUF file for the {info.architecture or 'unknown'} "
            f"architecture, not {entry.architecture}. It was not installed.",
            hint="the repository may have changed; try another variant (localrag models)")
    expected = entry.kind if entry is not None else None
    if expected is not None and info.kind != expected:
        raise ModelPullError(
            f"{source.described} is a GGUF file but not a {expected} model: {info.reason}. "
            "It was not installed.",
            hint="the repository may have changed; try another variant (localrag models)")
    if info.kind == "unsupported":
        raise ModelPullError(
            f"{source.described} is a GGUF file localrag cannot run: {info.reason}. "
            "It was not installed.",
            hint="pick a Self-RAG conversion (localrag models pull selfrag-7b) or an "
            "instruct model with a chat template")
    return info


def _check_space(folder: Path, needed: int, total: int, source: PullSource) -> None:
    free = shutil.disk_usage(folder).free
    if free < needed + SPACE_MARGIN_BYTES:
        raise ModelPullError(
            f"Not enough disk space for {source.described}: it needs {_size(needed)} more "
            f"({_size(total)} in all), {folder} has {_size(free)} free.",
            hint="free some space, or keep models elsewhere: --data-dir DIR or "
            "LOCALRAG_HOME=DIR (models go to DIR/models)")


def _cancelled(source: PullSource, part: Path, remote: _Remote) -> PullCancelled:
    have = part.stat().st_size if part.is_file() else 0
    of = f" of {_size(remote.size)}" if remote.size else ""
    return PullCancelled(
        f"Download of {source.described} stopped at {_size(have)}{of}; the part is kept in "
        f"{part}.",
        hint=f"run `localrag models pull {source.text}` again to resume where it stopped")


def _discard(*paths: Path) -> None:
    for p in paths:
        try:
            p.unlink(missing_ok=True)
        except OSError:
            pass


def _head_text(path: Path) -> str:
    try:
        with path.open("rb") as f:
            return f.read(24).decode("utf-8", "replace")
    except OSError:
        return ""
