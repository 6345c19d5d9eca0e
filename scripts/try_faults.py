"""Deliberate faults, each of which a named test must catch (issue 21: every test can fail).

    python scripts/try_faults.py            # every fault
    python scripts/try_faults.py watch-burst pull-dns

For each fault: a detached git worktree of HEAD gets one small edit to the product code
(the fault), then the tests meant to catch it run there; the fault is caught when they
fail. Prints one line per fault and exits 1 if any fault went unnoticed. Nothing in the
checkout you run it from is touched. Takes a few minutes (some tests load real models).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Fault:
    name: str
    what: str            # the fault, in words
    path: str            # file edited
    old: str             # text replaced (must occur exactly once)
    new: str
    tests: tuple[str, ...]


FAULTS = [
    Fault("watch-burst", "the watcher hands each saved path to the index as its own update "
          "(a save burst is no longer one update)",
          "indexer/watcher.py",
          "                    if batch:\n                        report = self.index.update(batch, save_caches=False)\n"
          "                        self.on_event(WatchEvent(paths=batch, report=report))",
          "                    for one in batch:\n                        report = self.index.update([one], save_caches=False)\n"
          "                        self.on_event(WatchEvent(paths=[one], report=report))",
          ("tests/test_indexer_watch.py::test_save_burst_is_one_update",)),
    Fault("arithmetic-cue", "'N times M' is no longer read as arithmetic, so 'What is 12 "
          "times 7?' searches the files",
          "localrag/answering/decide.py", "|times|plus|", "|plus|",
          ("tests/test_request_kind.py",)),
    Fault("judge-flat", "the SmolLM2 judge's support scores no longer vary with the "
          "sentence (the graded 'fully/partially' mass is dropped)",
          "localrag/answering/judge/model_critic.py",
          "            x = p_full + 0.5 * p_partial\n",
          "            x = 0.5\n",
          ("tests/test_critics.py::test_smollm2_judge_figures_are_recorded",)),
    Fault("auc-ties", "the AUC counts ties as losses instead of one half",
          "bench/critic_evaluation.py",
          "1.0 if a > b else 0.5 if a == b else 0.0", "1.0 if a > b else 0.0",
          ("tests/test_critics.py::test_auc",)),
    Fault("quotes-late", "quotes reach on_segment only after the model has generated",
          "localrag/answering/generate/instruct.py",
          "            out.append(seg)\n            if self.on_segment is not None:\n"
          "                self.on_segment(seg)\n        return out\n",
          "            out.append(seg)\n        return out\n",
          ("tests/test_answer_real.py::test_the_answer_cites_the_right_file_and_labels_no_noise_supported",)),
    Fault("code-style", "the answer's code blocks lose their background (a style change "
          "the 80x24 snapshot must see)",
          "tui/app.tcss", ".code-body {\n", ".code-body {\n    background: red;\n",
          ("tests/test_tui_real_corpus.py::test_real_answer_with_code_80x24",)),
    Fault("pull-dns", "the pull resolves the hub's host name itself before asking the proxy",
          "models/pull.py",
          "    url = source.resolve_url(endpoint)\n",
          "    url = source.resolve_url(endpoint)\n    import socket, urllib.parse\n"
          "    try:\n        socket.getaddrinfo(urllib.parse.urlsplit(url).hostname, 443)\n"
          "    except OSError:\n        pass\n",
          ("tests/test_models_pull.py::test_refused_connection_and_broken_proxy_are_messages",)),
    Fault("relevance-verdict", "the instruct engine labels passages relevant from an "
          "unchecked relevance score again",
          "localrag/answering/generate/instruct.py",
          "relevance=rel, relevant=None))", "relevance=rel, relevant=rel >= 0.5))",
          ("tests/test_instruct_engine.py",)),
]


def pytest(tests: tuple[str, ...], tree: Path) -> tuple[bool, str]:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "PYTHONPATH": str(tree)}
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider",
                           *tests], cwd=tree, env=env, capture_output=True, text=True)
    return done.returncode == 0, (done.stdout.strip().splitlines() or [""])[-1]


def run(fault: Fault, tree: Path) -> tuple[bool, str]:
    """(caught, what pytest said). A fault counts as caught only when the same tests
    pass on the unchanged tree first (so a test broken for another reason, such as a
    missing model, cannot pass for one that catches the fault)."""
    target = tree / fault.path
    text = target.read_text()
    if text.count(fault.old) != 1:
        return False, f"the text to change occurs {text.count(fault.old)} times in {fault.path}"
    passed, last = pytest(fault.tests, tree)
    if not passed:
        return False, f"fails without the fault too: {last}"
    target.write_text(text.replace(fault.old, fault.new))
    try:
        passed, last = pytest(fault.tests, tree)
    finally:
        target.write_text(text)
    return not passed, last


def main(argv: list[str]) -> int:
    chosen = [f for f in FAULTS if not argv or f.name in argv]
    missed = 0
    with tempfile.TemporaryDirectory(prefix="localrag-faults-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(tree), "HEAD"],
                       cwd=ROOT, check=True)
        try:
            for fault in chosen:
                caught, last = run(fault, tree)
                missed += not caught
                print(f"{'caught' if caught else 'MISSED'}  {fault.name}: {fault.what}\n"
                      f"        {' '.join(fault.tests)}: {last}", flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT)
    print(f"{len(chosen) - missed} of {len(chosen)} faults caught")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
