"""Messages for people when `localrag models pull` fails: each names the cause (no
connection, a refused connection, a proxy, HTTP 401/404/407/416/5xx, a full disk) and the
fix, instead of a traceback."""

from __future__ import annotations

import errno
import shutil
from pathlib import Path
from urllib.parse import urlsplit

from models.catalogue import format_size as _size
from models.errors import ModelError, ModelPullError
from models.pull_source import DEFAULT_ENDPOINT, PullSource


def is_http_error(exc: BaseException) -> bool:
    from huggingface_hub.errors import HfHubHTTPError

    return isinstance(exc, HfHubHTTPError)


def _httpx():
    try:
        import httpx2 as httpx              # huggingface_hub >= 2
    except ImportError:                     # pragma: no cover - huggingface_hub 1.x
        import httpx  # type: ignore[no-redef]
    return httpx


def _proxy_for(url: str) -> str | None:
    """The proxy the environment sets for `url` (HTTPS_PROXY, ...), None when it goes direct."""
    import urllib.request

    parts = urlsplit(url)
    if urllib.request.proxy_bypass_environment(parts.hostname or ""):
        return None
    proxies = urllib.request.getproxies_environment()
    return proxies.get(parts.scheme) or proxies.get("all")


def disk_error(exc: OSError, folder: Path, total: int | None) -> ModelError:
    if exc.errno == errno.EFBIG:
        return ModelPullError(
            f"The file system of {folder} cannot hold a file this large "
            f"({_size(total)}; FAT32 stops at 4 GB).",
            hint="keep models on another disk: --data-dir DIR or LOCALRAG_HOME=DIR")
    if exc.errno in (errno.ENOSPC, getattr(errno, "EDQUOT", -1)):
        try:
            free = _size(shutil.disk_usage(folder).free)
        except OSError:
            free = "?"
        return ModelPullError(
            f"The disk is full: cannot write the model into {folder} ({free} free"
            + (f", the model needs {_size(total)}" if total else "") + "). The part "
            "downloaded so far is kept.",
            hint="free some space and run the pull again (it resumes), or keep models "
            "elsewhere with --data-dir DIR or LOCALRAG_HOME=DIR")
    return ModelPullError(f"Cannot write the model into {folder}: {exc.strerror or exc}",
                          hint=f"check that {folder} exists and is writable")


def explain_network_error(exc: BaseException, source: PullSource, url: str,
                          endpoint: str) -> ModelError:
    """A ModelPullError naming the cause and the fix for a failed request to `url`."""
    if isinstance(exc, ModelError):
        return exc
    httpx = _httpx()
    host = urlsplit(url).netloc or url
    proxy = _proxy_for(url)
    mirror = (f" (HF_ENDPOINT={endpoint})" if source.url is None
              and endpoint != DEFAULT_ENDPOINT else "")
    from huggingface_hub.errors import (GatedRepoError, HfHubHTTPError, HFValidationError,
                                        OfflineModeIsEnabled, RemoteEntryNotFoundError,
                                        RepositoryNotFoundError, RevisionNotFoundError)

    if isinstance(exc, HfHubHTTPError):
        status = exc.response.status_code if exc.response is not None else None
        page = f"{endpoint}/{source.repo}" if source.repo else url
        if isinstance(exc, GatedRepoError) or status in (401, 403):
            what = ("is gated: its owner asks people to accept terms first"
                    if isinstance(exc, GatedRepoError) else
                    "does not exist, or is private or gated")
            return ModelPullError(
                f"Access to {source.described} was refused (HTTP {status}): the repository "
                f"{what}.",
                hint=f"check the name on {page}; for a gated or private repository accept "
                "its terms there and log in (`hf auth login`, or set HF_TOKEN)"
                if source.url is None else f"check the address; the server at {host} "
                "wants a login localrag cannot give: download the file in a browser and "
                "check it with `localrag models FILE`")
        if status == 404 or isinstance(exc, (RepositoryNotFoundError, RevisionNotFoundError,
                                             RemoteEntryNotFoundError)):
            if source.url is not None:
                return ModelPullError(f"Nothing at {url} (HTTP {status}).",
                                      hint="check the address (copy the file's download link)")
            if isinstance(exc, RepositoryNotFoundError):
                return ModelPullError(
                    f"The repository {source.repo} was not found (HTTP {status}){mirror}.",
                    hint=f"check the name on {page}")
            return ModelPullError(
                f"{source.repo} has no file {source.path_in_repo} (HTTP {status}){mirror}.",
                hint=f"see the file list on {page}/tree/main and give "
                "OWNER/REPO/FILE.gguf with the exact name")
        if status == 407:
            return ModelPullError(
                f"The proxy {proxy or ''} wants a login (HTTP 407).",
                hint="put the user name and password in the proxy variable: "
                "HTTPS_PROXY=http://USER:PASSWORD@HOST:PORT")
        if status == 416:
            return ModelPullError(
                f"{host} refused to resume the download (HTTP 416).",
                hint=f"delete the .part file of {source.filename} in the models folder and "
                "run the pull again")
        return ModelPullError(
            f"{host} answered HTTP {status} for {source.described}.",
            hint="try again later; 5xx answers mean the server has a problem"
            if status and status >= 500 else "check the name or address")
    if isinstance(exc, OfflineModeIsEnabled):
        return ModelPullError(f"huggingface_hub is in offline mode: {exc}",
                              hint="unset HF_HUB_OFFLINE for this command")
    if isinstance(exc, httpx.ProxyError) or (proxy and isinstance(exc, httpx.ConnectError)):
        return ModelPullError(
            f"The proxy {proxy} failed while connecting to {host}: {_reason(exc)}.",
            hint="check HTTPS_PROXY / HTTP_PROXY / ALL_PROXY (or unset them to connect "
            "directly); hosts in NO_PROXY are reached without the proxy")
    if isinstance(exc, httpx.ConnectError):
        reason = _reason(exc)
        refused = "refused" in reason.lower()
        return ModelPullError(
            f"Cannot connect to {host}{mirror}: "
            + ("the connection was refused" if refused else reason) + ".",
            hint=("nothing answers at that address: check HF_ENDPOINT or the URL"
                  if refused and (mirror or source.url) else
                  "check the internet connection (and HTTPS_PROXY if you need a proxy)")
            + "; run the same command again to continue")
    if isinstance(exc, httpx.TimeoutException):
        return ModelPullError(
            f"{host} did not answer in time{mirror}.",
            hint="run the same command again (it resumes); on a slow line raise "
            "HF_HUB_DOWNLOAD_TIMEOUT (seconds, default 10)")
    if isinstance(exc, httpx.TransportError):
        return ModelPullError(
            f"The connection to {host} failed: {_reason(exc)}.",
            hint="run the same command again (it resumes)")
    if isinstance(exc, HFValidationError):
        return ModelPullError(f"{source.text!r} is not a valid repository name: {exc}",
                              hint="give OWNER/REPO/FILE.gguf as on the Hugging Face Hub")
    return ModelPullError(f"Downloading {source.described} failed: {type(exc).__name__}: {exc}",
                          hint="run the same command again")


def _reason(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:200]
