"""A stand-in for the Hugging Face Hub on 127.0.0.1, for the `models pull` tests.

It answers the URL shapes huggingface_hub uses, with the headers it reads
(huggingface_hub/file_download.py, get_hf_file_metadata and http_get):

- HEAD/GET {endpoint}/{owner}/{repo}/resolve/{revision}/{path}: like the hub for a large
  (LFS) file, a 302 to a CDN on another origin (a second port), with X-Repo-Commit,
  X-Linked-Etag (the SHA-256 of the content) and X-Linked-Size. An unknown repository
  gets 401 with X-Error-Code: RepoNotFound and an unknown file 404 with EntryNotFound,
  as on the hub.
- GET/HEAD {cdn}/blobs/{sha256}[/NAME]: the bytes, with ETag, Accept-Ranges, Content-Length, and
  206 Partial Content + Content-Range for `Range: bytes=START-`.

Knobs for failures: `announce` (a different X-Linked-Size), `serve` (different bytes than
the announced checksum), `stall_after` (send that many bytes, then wait for `release`),
`rate_bps` (a slow line). `python tests/hub_server.py --file X.gguf` serves by hand.
Bounded: every wait has a timeout, and both servers shut themselves down after
`lifetime_s` even if a test forgets to.
"""

from __future__ import annotations

import hashlib
import re
import socket
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

COMMIT = "0123456789abcdef0123456789abcdef01234567"


@dataclass
class Request:
    server: str         # "hub" or "cdn"
    method: str
    path: str
    range: str | None


@dataclass
class HubFiles:
    files: dict[tuple[str, str], bytes] = field(default_factory=dict)
    announce: dict[tuple[str, str], int] = field(default_factory=dict)   # X-Linked-Size
    serve: dict[str, bytes] = field(default_factory=dict)                # sha -> other bytes
    stall_after: int | None = None
    rate_bps: float | None = None       # send at about this many bytes per second
    release: threading.Event = field(default_factory=threading.Event)
    sent: int = 0                       # body bytes sent by the CDN, all requests together
    requests: list[Request] = field(default_factory=list)

    def add(self, repo: str, path: str, data: bytes) -> str:
        self.files[(repo, path)] = data
        return hashlib.sha256(data).hexdigest()

    def blob(self, sha: str) -> bytes | None:
        if sha in self.serve:
            return self.serve[sha]
        for data in self.files.values():
            if hashlib.sha256(data).hexdigest() == sha:
                return data
        return None


def free_port() -> int:
    """A port nothing listens on (for 'connection refused')."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HubServer:
    """`with HubServer() as hub:` ... `hub.endpoint` is the HF_ENDPOINT to use."""

    def __init__(self, *, lifetime_s: float = 300.0, stall_timeout_s: float = 60.0) -> None:
        self.state = HubFiles()
        self.lifetime_s = lifetime_s
        self.stall_timeout_s = stall_timeout_s
        self._servers: list[ThreadingHTTPServer] = []
        self._timer: threading.Timer | None = None

    # -- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> "HubServer":
        self.cdn = self._serve("cdn")
        self.hub = self._serve("hub")
        self._timer = threading.Timer(self.lifetime_s, self.stop)
        self._timer.daemon = True
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self.state.release.set()                  # let stalled handlers finish
        if self._timer is not None:
            self._timer.cancel()
        for server in self._servers:
            server.shutdown()
            server.server_close()
        self._servers.clear()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.hub.server_address[1]}"

    @property
    def cdn_origin(self) -> str:
        return f"http://127.0.0.1:{self.cdn.server_address[1]}"

    def _serve(self, role: str) -> ThreadingHTTPServer:
        server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self, role))
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.1},
                         daemon=True, name=f"hub-server-{role}").start()
        self._servers.append(server)
        return server


def _handler(owner: HubServer, role: str) -> type[BaseHTTPRequestHandler]:
    state = owner.state

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: object) -> None:     # quiet
            pass

        def do_HEAD(self) -> None:
            self._answer(body=False)

        def do_GET(self) -> None:
            self._answer(body=True)

        def _answer(self, *, body: bool) -> None:
            state.requests.append(Request(role, self.command, self.path,
                                          self.headers.get("Range")))
            if role == "hub":
                self._resolve()
            else:
                self._blob(body)

        def _resolve(self) -> None:
            m = re.match(r"^/([^/]+/[^/]+)/resolve/([^/]+)/(.+)$", self.path)
            if not m:
                return self._error(404, "EntryNotFound")
            repo, _revision, path = m.groups()
            if not any(r == repo for r, _ in state.files):
                return self._error(401, "RepoNotFound")
            data = state.files.get((repo, path))
            if data is None:
                return self._error(404, "EntryNotFound")
            sha = hashlib.sha256(data).hexdigest()
            self.send_response(302)
            self.send_header("Location", f"{owner.cdn_origin}/blobs/{sha}")
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("X-Linked-Etag", f'"{sha}"')
            self.send_header("X-Linked-Size", str(state.announce.get((repo, path), len(data))))
            self.send_header("ETag", '"a-git-blob-sha1-of-the-pointer"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _error(self, status: int, code: str) -> None:
            self.send_response(status)
            self.send_header("X-Error-Code", code)
            self.send_header("X-Repo-Commit", COMMIT)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def _blob(self, body: bool) -> None:
            m = re.match(r"^/blobs/([0-9a-f]{64})(/[^/]+)?$", self.path)
            sha = m.group(1) if m else ""                     # /blobs/SHA or /blobs/SHA/NAME
            data = state.blob(sha) if m else None
            if data is None:
                return self._error(404, "EntryNotFound")
            start = 0
            m = re.match(r"^bytes=(\d+)-$", self.headers.get("Range") or "")
            if m:
                start = int(m.group(1))
                if start >= len(data):
                    self.send_response(416)
                    self.send_header("Content-Range", f"bytes */{len(data)}")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(data) - 1}/{len(data)}")
            else:
                self.send_response(200)
            self.send_header("Content-Length", str(len(data) - start))
            self.send_header("Accept-Ranges", "bytes")
            self.send_header("ETag", f'"{sha}"')
            self.end_headers()
            if not body:
                return
            view = memoryview(data)[start:]
            try:
                for i in range(0, len(view), 65536):
                    if state.stall_after is not None and state.sent >= state.stall_after:
                        state.release.wait(owner.stall_timeout_s)
                        if state.stall_after is not None:      # still stalled: give up
                            return
                    piece = view[i:i + 65536]
                    self.wfile.write(piece)
                    state.sent += len(piece)
                    if state.rate_bps:
                        time.sleep(len(piece) / state.rate_bps)
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):
                pass                                        # the client went away

    return Handler


def main(argv: list[str] | None = None) -> int:
    """Serve GGUF files by hand, e.g. to try `localrag models pull` without the internet:

        python tests/hub_server.py --file /tmp/tiny.gguf [--as m4r1/selfrag_llama2_7b-GGUF/selfrag_llama2_7b.q4_k_m.gguf]
        HF_ENDPOINT=http://127.0.0.1:PORT localrag models pull selfrag-7b
    """
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(description=main.__doc__.split("\n\n")[0])
    parser.add_argument("--file", type=Path, required=True, help="the file to serve")
    parser.add_argument("--as", dest="name", default="m4r1/selfrag_llama2_7b-GGUF/"
                        "selfrag_llama2_7b.q4_k_m.gguf", help="OWNER/REPO/PATH it is served as")
    parser.add_argument("--seconds", type=float, default=600, help="stop after this long")
    parser.add_argument("--rate", type=float, help="send at about this many MB/s")
    args = parser.parse_args(argv)
    owner, repo, path = args.name.split("/", 2)
    import signal

    def stop(*_: object) -> None:
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, stop)
    with HubServer(lifetime_s=args.seconds) as hub:
        hub.state.add(f"{owner}/{repo}", path, args.file.read_bytes())
        hub.state.rate_bps = args.rate * 1e6 if args.rate else None
        print(f"HF_ENDPOINT={hub.endpoint}", flush=True)
        try:
            deadline = time.monotonic() + args.seconds
            while time.monotonic() < deadline and hub._servers:
                time.sleep(0.2)
        except KeyboardInterrupt:
            pass
        for r in hub.state.requests:
            print(f"served: {r.server} {r.method} {r.path}"
                  + (f" Range: {r.range}" if r.range else ""), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
