"""What the index holds and what it is doing: roots, counts, errors, live progress."""

from __future__ import annotations

from rich.text import Text
from textual.containers import Vertical
from textual.widgets import DataTable, ProgressBar, Static

from indexer.records import IndexProgress, IndexReport, IndexStatus, WatchEvent


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "?"
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def progress_summary(p: IndexProgress) -> str:
    """One line: phase, files, chunks, rate, time left."""
    total = f"/{p.files_total}" if p.files_total else ""
    parts = [f"{p.phase} {p.files_done}{total} files", f"{p.chunks_done} chunks"]
    if p.elapsed_s > 0:
        parts.append(f"{p.files_per_s:.1f} files/s")
    if p.phase != "done" and p.files_total:
        parts.append(f"{_duration(p.eta_s)} left")
    return " · ".join(parts)


def report_summary(report: IndexReport) -> str:
    if report.cancelled:
        head = "Indexing cancelled"
    else:
        head = "Index up to date"
    parts = [f"{report.added} added", f"{report.updated} updated", f"{report.removed} removed"]
    if report.moved:
        parts.append(f"{report.moved} moved")
    parts.append(f"{report.unchanged} unchanged")
    if report.skipped:
        parts.append(f"{report.skipped} skipped")
    if report.errors:
        parts.append(f"{report.errors} in error")
    return f"{head}: " + ", ".join(parts) + f" ({report.elapsed_s:.1f}s)"


def watch_summary(event: WatchEvent) -> str:
    r = event.report
    names = ", ".join(p.rsplit("/", 1)[-1] for p in event.paths[:3])
    more = f" and {len(event.paths) - 3} more" if len(event.paths) > 3 else ""
    changed = r.added + r.updated + r.removed + r.moved
    if not changed:          # e.g. a folder's timestamps changed: nothing to re-index
        return f"Checked {names}{more}: no indexed file changed"
    return f"Re-indexed {changed} file(s) after changes to {names}{more}"


class IndexProgressView(Vertical):
    """A progress bar and its line of figures; hidden while no run is active."""

    def compose(self):
        yield ProgressBar(total=None, show_eta=False, show_percentage=True, id="index-bar")
        yield Static("", id="index-figures")

    def show_progress(self, progress: IndexProgress, *, paused: bool = False) -> None:
        self.display = True
        bar = self.query_one(ProgressBar)
        if progress.files_total:
            bar.update(total=progress.files_total, progress=progress.files_done)
        line = progress_summary(progress)
        if paused:
            line = "paused · " + line
        self.query_one("#index-figures", Static).update(line)

    def show_finished(self, text: str) -> None:
        bar = self.query_one(ProgressBar)
        bar.update(total=bar.total or 1, progress=bar.total or 1)
        self.query_one("#index-figures", Static).update(text)


class IndexOverview(Vertical):
    """Counts, roots (a table with a cursor, for removing), files in error."""

    def compose(self):
        yield Static("", id="index-counts")
        table: DataTable[str] = DataTable(id="roots-table", cursor_type="row", zebra_stripes=True)
        table.add_columns("folder", "files", "chunks")
        yield table
        yield Static("", id="index-errors")

    def show_status(self, status: IndexStatus) -> None:
        counts = (f"{len(status.roots)} folder(s) · {status.files_indexed} files indexed · "
                  f"{status.chunks} chunks · {status.files_skipped} skipped · "
                  f"{status.files_error} in error · "
                  f"{(status.db_bytes + status.hnsw_bytes) / 1e6:.1f} MB")
        self.query_one("#index-counts", Static).update(counts)
        table = self.query_one("#roots-table", DataTable)
        table.clear()
        for root in status.roots:
            table.add_row(root.path, str(root.files), str(root.chunks), key=root.path)
        errors = self.query_one("#index-errors", Static)
        if status.errors:
            text = Text("Files in error:\n", style="bold red")
            for problem in status.errors[:50]:
                text.append(f"  {problem.path}", style="red")
                text.append(f": {problem.reason}\n")
            if len(status.errors) > 50:
                text.append(f"  … and {len(status.errors) - 50} more\n", style="dim")
            errors.update(text)
        else:
            errors.update(Text("No files in error.", style="dim"))

    def selected_root(self) -> str | None:
        table = self.query_one("#roots-table", DataTable)
        if table.row_count == 0:
            return None
        row = table.get_row_at(table.cursor_row)
        return str(row[0])
