"""What the index holds and what it is doing: roots, counts, errors, live progress."""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.containers import Vertical
from textual.widgets import DataTable, ProgressBar, Static, Tree
from textual.widgets.tree import TreeNode

from indexer.records import FileProblem, IndexProgress, IndexReport, IndexStatus, ProblemGroup, WatchEvent
from localrag.index_progress import index_progress_line
from localrag.model_files import duration

PAGE = 200
"""Files added to an open group each time its "more" line is chosen."""


_duration = duration


def progress_summary(p: IndexProgress) -> str:
    """One line: phase, files, word pieces, rate, time left, what is embedded now."""
    return index_progress_line(p)


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
        yield Static("", id="index-figures", markup=False)

    def show_progress(self, progress: IndexProgress, *, paused: bool = False) -> None:
        self.display = True
        bar = self.query_one(ProgressBar)
        if progress.pieces_total:     # word pieces: what the time goes into (indexer/eta.py)
            bar.update(total=progress.pieces_total, progress=progress.pieces_done)
        elif progress.files_total:
            bar.update(total=progress.files_total, progress=progress.files_done)
        line = progress_summary(progress)
        if paused:
            line = "paused · " + line
        self.query_one("#index-figures", Static).update(line)

    def show_finished(self, text: str) -> None:
        bar = self.query_one(ProgressBar)
        bar.update(total=bar.total or 1, progress=bar.total or 1)
        self.query_one("#index-figures", Static).update(text)


@dataclass
class GroupNode:
    """Data of a group's node in the problems tree."""

    state: str
    kind: str
    count: int
    shown: int = 0


@dataclass
class MoreNode:
    """Data of the "N more" line at the end of a group that is not fully shown."""

    group: GroupNode


class ProblemTree(Tree[object]):
    """Files not indexed, one expandable node per kind of reason (errors open, skips
    closed). A group shows its first files; choosing its "more" line asks the app for
    the next page (LocalragApp.load_problem_page), which `add_page` appends."""

    def __init__(self, **kwargs) -> None:
        super().__init__("files not indexed", **kwargs)
        self.show_root = False
        self.guide_depth = 2
        self._groups: dict[tuple[str, str], TreeNode[object]] = {}

    def show_groups(self, groups: list[ProblemGroup]) -> None:
        opened = {key for key, node in self._groups.items() if node.is_expanded}
        known = set(self._groups)
        self.clear()
        self._groups = {}
        for group in groups:
            key = (group.state, group.kind)
            data = GroupNode(group.state, group.kind, group.count)
            node = self.root.add(self._group_label(group), data=data)
            self._groups[key] = node
            self._add_files(node, data, group.files)
            if key in opened or (key not in known and group.state == "error"):
                node.expand()

    @staticmethod
    def _group_label(group: ProblemGroup) -> Text:
        style = "bold red" if group.state == "error" else "bold"
        text = Text(f"{'in error' if group.state == 'error' else 'skipped'}: ", style=style)
        text.append(f"{group.label} ", style=style)
        text.append(f"({group.count:,} file{'s' if group.count != 1 else ''})", style="dim")
        return text

    def _add_files(self, node: TreeNode[object], data: GroupNode, files: list[FileProblem]) -> None:
        more = [child for child in node.children if isinstance(child.data, MoreNode)]
        for child in more:
            child.remove()
        for problem in files:
            line = Text(problem.path, style="red" if problem.state == "error" else "")
            line.append(f": {problem.reason}", style="dim")
            node.add_leaf(line, data=problem)
        data.shown += len(files)
        left = data.count - data.shown
        if left > 0:
            node.add_leaf(Text(f"… {left:,} more (Enter shows {min(PAGE, left):,} more)",
                               style="italic"), data=MoreNode(data))

    def add_page(self, state: str, kind: str, offset: int, files: list[FileProblem]) -> None:
        node = self._groups.get((state, kind))
        if node is None or not isinstance(node.data, GroupNode) or node.data.shown != offset:
            return   # the tree was rebuilt meanwhile
        self._add_files(node, node.data, files)

    def shown_files(self, state: str, kind: str) -> list[FileProblem]:
        node = self._groups.get((state, kind))
        return [] if node is None else [c.data for c in node.children if isinstance(c.data, FileProblem)]

    def on_tree_node_selected(self, event: Tree.NodeSelected[object]) -> None:
        data = event.node.data
        if isinstance(data, MoreNode):
            event.stop()
            load = getattr(self.app, "load_problem_page", None)
            if load is not None:
                load(data.group.state, data.group.kind, data.group.shown, PAGE)


class IndexOverview(Vertical):
    """Counts, roots (a table with a cursor, for removing), files not indexed by reason."""

    def compose(self):
        yield Static("", id="index-counts", markup=False)
        table: DataTable[str] = DataTable(id="roots-table", cursor_type="row", zebra_stripes=True)
        table.add_columns("folder", "files", "chunks")
        yield table
        yield Static("", id="index-problems-title")
        yield ProblemTree(id="index-problems")
        yield Static("", id="index-problem-detail")

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[object]) -> None:
        """The highlighted file's whole reason, wrapped: a tree line cuts it at the
        screen's edge (at 80 columns most reasons do not fit)."""
        detail = self.query_one("#index-problem-detail", Static)
        data = event.node.data
        if isinstance(data, FileProblem):   # the name: the tree line starts with the path
            name = data.path.rstrip("/").rsplit("/", 1)[-1] or data.path
            text = Text(name, style="bold red" if data.state == "error" else "bold")
            text.append(f": {data.reason}")
            detail.update(text)
        else:
            detail.update("")

    def show_status(self, status: IndexStatus) -> None:
        counts = (f"{len(status.roots)} folder(s) · {status.files_indexed} files indexed · "
                  f"{status.chunks} chunks · {status.files_skipped} skipped · "
                  f"{status.files_error} in error · "
                  f"{(status.db_bytes + status.hnsw_bytes) / 1e6:.1f} MB")
        self.query_one("#index-counts", Static).update(counts)
        table = self.query_one("#roots-table", DataTable)
        table.clear()
        self._root_paths = [root.path for root in status.roots]
        for root in status.roots:
            folder = root.path + ("  (missing)" if root.missing else "")
            table.add_row(folder, str(root.files), str(root.chunks), key=root.path)
        title = self.query_one("#index-problems-title", Static)
        tree = self.query_one(ProblemTree)
        if status.problems:
            title.update(Text(f"Files not indexed: {status.files_error:,} in error, "
                              f"{status.files_skipped:,} skipped (Enter opens a group)",
                              style="bold"))
            tree.display = True
        else:
            title.update(Text("No files skipped or in error.", style="dim"))
            tree.display = False
        tree.show_groups(status.problems)

    def selected_root(self) -> str | None:
        table = self.query_one("#roots-table", DataTable)
        if table.row_count == 0:
            return None
        paths = getattr(self, "_root_paths", [])
        return paths[table.cursor_row] if 0 <= table.cursor_row < len(paths) else None
