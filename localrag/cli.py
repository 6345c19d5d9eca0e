"""The `localrag` command line. Every command goes through the `Assistant` facade.

Errors meant for people (USER_ERRORS) print one message and exit with code 2; heavy
modules are imported inside the commands so that `localrag --help` is instant.
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import sys
import threading
import time
from collections.abc import Sequence
from typing import Any

from localrag import __version__


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="localrag",
        description="Offline assistant over your own files: index folders, search them, "
        "and ask questions answered sentence by sentence with support labels and sources. "
        "With no command, opens the terminal app.",
    )
    parser.add_argument("--version", action="version", version=f"localrag {__version__}")
    parser.add_argument("--data-dir", metavar="DIR",
                        help="where the index, chats and settings live "
                        "(default: $LOCALRAG_HOME or the platform's user data folder)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    sub.add_parser("tui", help="open the terminal app (the default)")

    p = sub.add_parser("index", help="add folders or files as roots and bring the index up to date")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="folders or files to add (none: update all roots)")
    p.add_argument("--dry-run", action="store_true",
                   help="list what would be indexed and why the rest is skipped; change nothing")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")

    p = sub.add_parser("roots", help="list indexed roots, or remove one")
    p.add_argument("--remove", metavar="PATH", help="remove this root and all its files' data")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("status", help="counts, roots, and every file not indexed with its reason")
    p.add_argument("--json", action="store_true", help="print the status as JSON (schema in README)")
    shown = p.add_mutually_exclusive_group()
    shown.add_argument("--all", action="store_true",
                       help="list every skipped file and file in error (default: the first "
                       "of each group)")
    shown.add_argument("--reason", metavar="KIND",
                       help="list every file of one group, e.g. unsupported_type (the kinds "
                       "are shown in brackets)")
    p.add_argument("--limit", type=int, default=10, metavar="N",
                   help="files listed per group (default 10)")

    p = sub.add_parser("watch", help="keep the index current while files change (Ctrl-C stops)")
    p.add_argument("--debounce", type=float, default=0.5, metavar="SECONDS",
                   help="wait this long after the last change before re-indexing")

    p = sub.add_parser("search", help="hybrid (dense + BM25) search of the index")
    p.add_argument("query")
    p.add_argument("-k", type=int, default=5, help="number of results (default 5)")
    p.add_argument("--json", action="store_true",
                   help="print a JSON list of {path, title, start_line, end_line, page, score, text}")

    p = sub.add_parser("ask", help="answer a question from your files, sentence by sentence")
    p.add_argument("question")
    p.add_argument("--mode", choices=["adaptive", "always", "never"],
                   help="retrieval: adaptive (model decides), always, never")
    p.add_argument("--threshold", type=float, help="adaptive retrieval threshold (default 0.2)")
    p.add_argument("-k", type=int, dest="k", help="passages to read (default 5)")
    p.add_argument("--w-rel", type=float, help="weight of the relevance critique (default 1.0)")
    p.add_argument("--w-sup", type=float, help="weight of the support critique (default 1.0)")
    p.add_argument("--w-use", type=float, help="weight of the utility critique (default 0.5)")
    p.add_argument("--no-seq-score", action="store_true",
                   help="leave the sequence probability out of candidate scores")
    p.add_argument("--strict", action="store_true",
                   help="drop candidates the critic marks unsupported")
    p.add_argument("--model", metavar="GGUF", help="GGUF model file (default: settings, then SmolLM2-135M)")
    p.add_argument("--gpu-layers", type=int, help="layers to offload to the GPU (-1 = all)")
    p.add_argument("--json", action="store_true", help="print the answer as JSON (schema in README)")

    p = sub.add_parser(
        "models", help="list the catalogue and the model files here, check one file, or "
        "download a model (pull: the only command that uses the network)",
        usage="localrag models [GGUF] [--json]\n"
        "       localrag models pull [NAME | OWNER/REPO/FILE.gguf | URL] [--use] [--offline]\n"
        "       localrag models check-selfrag [GGUF] [--json]",
        description="Without arguments: the catalogue (what `pull` can download by name) "
        "next to the model files here. With GGUF: check that file without running it. "
        "`pull` downloads a model into DATA_DIR/models (default selfrag-7b, i.e. "
        "selfrag-7b:q4_k_m), resumes an interrupted download, and checks the file before "
        "it can be selected. `check-selfrag` runs a Self-RAG file (default: the model in "
        "use) on ten fixed question-passage pairs and says whether it wants a space piece "
        "after special tokens (the space_after_special setting).")
    p.add_argument("target", nargs="*", metavar="GGUF | pull NAME", help=argparse.SUPPRESS)
    p.add_argument("--use", action="store_true",
                   help="pull: make the downloaded model the one in use (settings model_path)")
    p.add_argument("--offline", action="store_true",
                   help="pull: refuse to open any connection (as HF_HUB_OFFLINE=1 does)")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("settings", help="show the settings file, or change a setting")
    p.add_argument("--set", nargs=2, action="append", metavar=("KEY", "VALUE"),
                   help="change a setting and save it (repeatable)")
    p.add_argument("--json", action="store_true")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):
        # a name with odd bytes, or a terminal that is not UTF-8, must never end a command
        # with UnicodeEncodeError: such characters print as \xNN / \uNNNN instead
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="backslashreplace")
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command == "models" and not any(a.startswith("-") for a in extra):
        args.target += extra       # `models pull --use NAME`: argparse stops at the option
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    command = args.command or "tui"
    from localrag.errors import USER_ERRORS

    try:
        handler = globals()[f"cmd_{command}"]
        return int(handler(args) or 0)
    except USER_ERRORS as exc:
        print(f"localrag: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("localrag: interrupted", file=sys.stderr)
        return 130


# -- commands ---------------------------------------------------------------------------------

def _open(args: argparse.Namespace, overrides: dict[str, Any] | None = None, *, one_shot: bool = False):
    from localrag.assistant import Assistant

    return Assistant.open(args.data_dir, overrides=overrides, one_shot=one_shot)


def _print_json(data: Any) -> None:
    json.dump(data, sys.stdout, indent=2, ensure_ascii=False, default=str)
    sys.stdout.write("\n")


def cmd_tui(args: argparse.Namespace) -> int:
    from tui.app import run

    run(args.data_dir)
    return 0


class _ProgressPrinter:
    """One status line on stderr, redrawn at most 10 times a second, and at once when the
    phase changes (the "embedding" line is the one on screen while a batch is encoded)."""

    def __init__(self) -> None:
        self.last = 0.0
        self.phase = ""
        self.tty = sys.stderr.isatty()

    def __call__(self, p) -> None:  # IndexProgress
        now = time.monotonic()
        if not self.tty or (now - self.last < 0.1 and p.phase == self.phase):
            return
        self.last, self.phase = now, p.phase
        from localrag.index_progress import index_progress_line

        line = index_progress_line(p)
        width = shutil.get_terminal_size((100, 24)).columns
        sys.stderr.write("\r" + line[:max(20, width - 1)] + "\x1b[K")
        sys.stderr.flush()

    def finish(self) -> None:
        if self.tty:
            sys.stderr.write("\r\x1b[K")


def _report_text(report) -> str:
    parts = [f"{report.added} added", f"{report.updated} updated", f"{report.moved} moved",
             f"{report.removed} removed", f"{report.unchanged} unchanged",
             f"{report.skipped} skipped", f"{report.errors} errors"]
    text = (f"{', '.join(parts)}; {report.chunks_added} chunks added, "
            f"{report.chunks_removed} removed in {report.elapsed_s:.1f}s")
    if report.cancelled:
        text += " (cancelled: run it again to finish)"
    return text


def cmd_index(args: argparse.Namespace) -> int:
    with _open(args) as assistant:
        if args.dry_run:
            # PATHs need not be roots yet: a dry run shows what adding them would index.
            report = assistant.update_index(args.paths or None, dry_run=True)
            if args.json:
                _print_json(report.to_json())
                return 0
            for path in report.would_index:
                print(f"index  {path}  ({report.parsers.get(path, 'text')})")
            for problem in report.problems:
                print(f"{problem.state:6} {problem.path}: {problem.reason}")
            print(f"{len(report.would_index)} files would be indexed, "
                  f"{len(report.problems)} skipped")
            return 0
        for path in args.paths:
            assistant.add_root(path)
        if not assistant.roots():
            print("No folders indexed yet. Run: localrag index PATH", file=sys.stderr)
            return 2
        printer = _ProgressPrinter()
        cancel = threading.Event()
        try:
            report = assistant.update_index(None, progress=printer, cancel=cancel)
        finally:
            printer.finish()
        if args.json:
            _print_json(report.to_json())
        else:
            print(_report_text(report))
            for problem in report.problems:
                if problem.state == "error":
                    print(f"error  {problem.path}: {problem.reason}")
            if report.skipped or report.errors:
                print("`localrag status` lists every file not indexed, with its reason")
        return 0


def cmd_roots(args: argparse.Namespace) -> int:
    with _open(args) as assistant:
        if args.remove:
            removed = assistant.remove_root(args.remove)
            print(f"Removed root {args.remove} ({removed} files)")
            return 0
        roots = assistant.roots()
        if args.json:
            _print_json([vars(r) for r in roots])
        elif not roots:
            print("No roots yet. Add one with: localrag index PATH")
        else:
            for r in roots:
                print(f"{r.path}  ({r.files} files, {r.chunks} chunks)")
        return 0


def cmd_status(args: argparse.Namespace) -> int:
    from indexer.reasons import KINDS

    if args.reason is not None and args.reason not in KINDS:
        print(f"localrag: unknown reason kind {args.reason!r}; one of: {', '.join(KINDS)}",
              file=sys.stderr)
        return 2
    per_group = None if (args.all or args.reason) else max(0, args.limit)
    with _open(args) as assistant:
        status = assistant.status(per_group=per_group, kind=args.reason)
        if args.json:
            _print_json(status.to_json())
            return 0
        print(f"data directory: {assistant.paths.data_dir}")
        print(f"files: {status.files_indexed} indexed, {status.files_skipped} skipped, "
              f"{status.files_error} in error; {status.chunks} chunks")
        print(f"index size: {(status.db_bytes + status.hnsw_bytes) / 1e6:.1f} MB "
              f"(embeddings: {status.embedding_model}"
              + (f", {status.embedding_engine})" if status.embedding_engine else ")"))
        for r in status.roots:
            missing = "  MISSING: not found (deleted, or a drive not mounted?)" if r.missing else ""
            print(f"root  {r.path}  ({r.files} files, {r.chunks} chunks){missing}")
        for group in status.problems:
            state = "error" if group.state == "error" else "skipped"
            print(f"{state:7} {group.label} [{group.kind}]: {group.count} "
                  f"file{'s' if group.count != 1 else ''}")
            for problem in group.files:
                print(f"    {problem.path}: {problem.reason}")
            if group.more:
                print(f"    ... and {group.more} more: localrag status --reason {group.kind}")
        if args.reason and not status.problems:
            print(f"no files skipped or in error for the reason {args.reason}")
        return 0


def _stop_on_sigterm(signum, frame) -> None:  # noqa: ANN001
    """SIGTERM (kill, systemd, a logout) stops `watch` as Ctrl-C does. A handler must take
    no lock (the main thread may hold the one it would wait for), so it raises where the
    main thread is; a second SIGTERM while the caches are written is ignored."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise KeyboardInterrupt


def cmd_watch(args: argparse.Namespace) -> int:
    stop = threading.Event()
    previous = signal.getsignal(signal.SIGTERM)
    try:
        with _open(args) as assistant:
            if not assistant.roots():
                print("No folders to watch. Add one with: localrag index PATH", file=sys.stderr)
                return 2

            # the catch-up sync may report before the banner is out: its lines wait for it,
            # so "Watching ..." is always the first line (scripts and tests read it first)
            announced = threading.Event()

            def on_event(event) -> None:
                announced.wait()
                print(f"{time.strftime('%H:%M:%S')}  {_report_text(event.report)}", flush=True)
                for problem in event.report.problems:
                    if problem.state == "error":
                        print(f"error  {problem.path}: {problem.reason}", flush=True)

            def on_error(exc: Exception) -> None:
                print(f"localrag: {exc}", file=sys.stderr, flush=True)

            try:
                assistant.start_watching(on_event, on_error=on_error, debounce_s=args.debounce)
                # stopped by SIGTERM as by Ctrl-C, leaving the `with` normally: the watcher
                # then writes the HNSW/BM25 files of what it changed, so the next start loads
                # them instead of repairing them from SQLite
                if threading.current_thread() is threading.main_thread():
                    signal.signal(signal.SIGTERM, _stop_on_sigterm)
                print(f"Watching {len(assistant.roots())} roots. Ctrl-C stops.", flush=True)
            finally:
                announced.set()
            try:
                while not stop.wait(0.5):
                    pass
            except KeyboardInterrupt:
                print("Stopped watching.", flush=True)
        return 0
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, previous)


def cmd_search(args: argparse.Namespace) -> int:
    with _open(args, one_shot=True) as assistant:
        passages = assistant.search(args.query, k=args.k)
        if args.json:
            _print_json([p.to_json() for p in passages])
            return 0
        if not passages:
            print("No results." if not assistant.index.is_empty()
                  else "The index is empty. Add a folder with: localrag index PATH")
        for n, p in enumerate(passages, 1):
            snippet = " ".join(p.text.split())[:200]
            print(f"[{n}] {p.locator}  {p.title}  (score {p.score:.4f})\n    {snippet}")
        return 0


def cmd_ask(args: argparse.Namespace) -> int:
    overrides = {
        "retrieval_mode": args.mode, "threshold": args.threshold, "k": args.k,
        "w_rel": args.w_rel, "w_sup": args.w_sup, "w_use": args.w_use,
        "strict": True if args.strict else None,
        "use_seq_score": False if args.no_seq_score else None,
        "model_path": args.model, "n_gpu_layers": args.gpu_layers,
    }
    from localrag.answering.label.render import answer_to_text

    with _open(args, overrides, one_shot=True) as assistant:
        answer = assistant.ask(args.question)
        if args.json:
            _print_json(answer.to_json())
        else:
            print(answer_to_text(answer))
        return 0


def cmd_models(args: argparse.Namespace) -> int:
    target = list(args.target)
    if target and target[0] == "pull":
        if len(target) > 2:
            raise _usage_error(f"pull takes one model, not {len(target) - 1}: "
                               + " ".join(target[1:]))
        return _cmd_pull(args, target[1] if len(target) > 1 else None)
    if target and target[0] == "check-selfrag":
        if len(target) > 2:
            raise _usage_error(f"check-selfrag takes one model file, not {len(target) - 1}")
        return _cmd_check_selfrag(args, target[1] if len(target) > 1 else None)
    if len(target) > 1:
        raise _usage_error(f"give one model file, not {len(target)}")
    if args.use or args.offline:
        raise _usage_error("--use and --offline go with pull: localrag models pull NAME --use")
    if target:
        from models.inspect import inspect_gguf

        info = inspect_gguf(target[0])             # one file asked for: its error is the answer
        if args.json:
            _print_json([{**vars(info), "path": str(info.path)}])
        else:
            print(info.describe())
        return 0
    with _open(args) as assistant:
        overview = assistant.models_overview()
    if args.json:
        _print_json(overview.to_json())
        return 0
    print(_overview_text(overview))
    return 0


def _cmd_check_selfrag(args: argparse.Namespace, path: str | None) -> int:
    from localrag.answering.check_selfrag import check_selfrag
    from localrag.paths import Paths
    from localrag.settings import Settings
    from models.inspect import inspect_gguf
    from models.loader import load_model

    settings = Settings.load(Paths.resolve(args.data_dir).settings_file)
    if path is None:
        path = settings.model_path
        if not path:
            raise _usage_error("no Self-RAG model is in use: give its file, "
                               "localrag models check-selfrag FILE.gguf")
    inspect_gguf(path)                    # a missing or broken file: its message
    model = load_model(path, n_ctx=2048, n_threads=settings.n_threads,
                       n_gpu_layers=settings.n_gpu_layers)
    try:
        report = check_selfrag(model)     # refuses a model without the reflection tokens
    finally:
        model.close()
    if args.json:
        _print_json(report.to_json())
    else:
        print(report.describe())
    return 0


def _usage_error(message: str):
    from localrag.errors import SettingsError

    return SettingsError(message, hint="localrag models [GGUF] | localrag models pull [NAME] "
                         "[--use] [--offline] | localrag models check-selfrag [GGUF]")


def _overview_text(overview) -> str:
    from models.catalogue import format_size

    lines = ["Catalogue (download one with: localrag models pull NAME):"]
    for s in overview.catalogue:
        e = s.entry
        name = e.name + (" (default)" if e.is_default else "")
        size = (format_size(s.size_bytes) if s.installed
                else f"about {format_size(e.approx_bytes)}")
        lines.append(f"  {name:28} {size:>16}  {s.state}")
        lines.append(f"  {'':28} {e.purpose}")
        lines.append(f"  {'':28} from {e.repo}/{e.filename}")
    free = (f"{format_size(overview.free_bytes)} free"
            if overview.free_bytes is not None else "free space unknown")
    lines.append(f"Models folder: {overview.models_dir} ({free})")
    for warning in overview.space_warnings():
        lines.append(f"warning: {warning}")
    lines.append("")
    lines.append("Model files here:")
    for info in overview.files:
        mark = "  (in use)" if overview.in_use is not None and info.path == overview.in_use else ""
        lines.append(info.describe().replace("\n", "\n  ").rstrip() + mark)
    for problem in overview.problems:
        lines.append(f"error  {problem}")
    lines.append(f"(put .gguf files in {overview.models_dir}, check one with "
                 "localrag models FILE.gguf, or download one with localrag models pull NAME)")
    return "\n".join(lines)


class _PullPrinter:
    """The download's progress bar on stderr: redrawn on a terminal, else a line per 10%."""

    WIDTH = 24

    def __init__(self) -> None:
        self.tty = sys.stderr.isatty()
        self.last_step = -1
        self.phase = ""

    def __call__(self, p) -> None:  # models.pull.PullProgress
        from localrag.model_files import progress_figures

        if p.phase == "connecting":          # the pull was allowed and starts now
            from models.pull_source import default_endpoint

            where = "" if p.source.url else f" from {default_endpoint()}"
            print(f"Pulling {p.source.described}{where}", flush=True)
            return
        new_phase, self.phase = p.phase != self.phase, p.phase
        fraction = p.fraction
        bar = ""
        if fraction is not None:
            filled = int(self.WIDTH * min(fraction, 1.0))
            bar = "[" + "#" * filled + "." * (self.WIDTH - filled) + "] "
        line = bar + progress_figures(p)
        if self.tty:
            sys.stderr.write(f"\r{line}\x1b[K" + ("\n" if p.phase == "done" else ""))
            sys.stderr.flush()
            return
        if p.phase == "downloading" and fraction is not None:
            step = int(fraction * 10)
            if step <= self.last_step:
                return
            self.last_step = step
        elif not new_phase:
            return
        sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def finish(self) -> None:
        if self.tty and self.phase not in ("", "done"):
            sys.stderr.write("\n")
            sys.stderr.flush()
            self.phase = "done"


def _cmd_pull(args: argparse.Namespace, name: str | None) -> int:
    from models.errors import PullCancelled
    from models.catalogue import format_size

    with _open(args) as assistant:
        printer = _PullPrinter()
        try:
            result = assistant.pull_model(name, progress=None if args.json else printer,
                                          offline=args.offline, use=args.use)
        except PullCancelled as exc:
            printer.finish()                  # end the bar's line before the message
            print(f"localrag: {exc}", file=sys.stderr)
            return 130
        finally:
            printer.finish()
        if args.json:
            _print_json({"path": str(result.path), "source": result.source.text,
                         "size_bytes": result.info.size_bytes, "kind": result.info.kind,
                         "downloaded_bytes": result.downloaded_bytes,
                         "resumed_from": result.resumed_from,
                         "already_installed": result.already_installed,
                         "in_use": str(result.path) == assistant.settings.model_path})
            return 0
        if result.already_installed:
            print(f"Already installed: {result.path} ({format_size(result.info.size_bytes)})")
        else:
            resumed = (f", resumed after {format_size(result.resumed_from)}"
                       if result.resumed_from else "")
            replaced = "; replaced the older file of that name" if result.replaced else ""
            print(f"Installed {result.path} ({format_size(result.info.size_bytes)} in "
                  f"{result.elapsed_s:.1f}s{resumed}{replaced}); checks passed:")
        print(result.info.describe())
        use = args.use or str(result.path) == assistant.settings.model_path
        if not use and sys.stdin.isatty() and sys.stdout.isatty():
            answer = input(f"Use {result.path.name} as the model now? [Y/n] ").strip().lower()
            if answer in ("", "y", "yes"):
                assistant.use_model(result.path)
                use = True
        if use:
            print(f"It is the model in use (model_path in {assistant.paths.settings_file}).")
        else:
            print(f"To use it: localrag settings --set model_path {result.path}"
                  "  (or pull with --use)")
        return 0


def cmd_settings(args: argparse.Namespace) -> int:
    with _open(args) as assistant:
        if args.set:
            assistant.update_settings(**{k: v for k, v in args.set})
        if args.json:
            _print_json(assistant.settings.to_dict())
        else:
            print(f"# {assistant.paths.settings_file}")
            for key, value in assistant.settings.to_dict().items():
                if key == "extensions":
                    value = f"{len(value)} extensions"
                print(f"{key} = {value!r}")
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
