"""`localrag index` on a terminal: the progress line counts files and word pieces, gives
the rate and what is being embedded (a real run: real model, SQLite, hnswlib)."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_index_progress_line_on_a_terminal(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    for i in range(30):
        (docs / f"note_{i:02d}.md").write_text(
            f"# Note {i}\n\n" + f"Heron number {i} wades through the reeds at dawn. " * 40)
    env = dict(os.environ, LOCALRAG_HOME=str(tmp_path / "data"), PYTHONPATH=str(ROOT),
               HF_HUB_OFFLINE="1", COLUMNS="200")
    leader, follower = pty.openpty()     # stderr a terminal: the line is drawn
    try:
        proc = subprocess.run([sys.executable, "-m", "localrag", "index", str(docs)], env=env,
                              stdout=subprocess.PIPE, stderr=follower, text=True, timeout=300)
        os.close(follower)
        follower = -1
        chunks = []
        while True:
            try:
                data = os.read(leader, 65536)
            except OSError:      # the terminal's other end is closed: all read
                break
            if not data:
                break
            chunks.append(data)
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    assert proc.returncode == 0, proc.stdout
    screen = b"".join(chunks).decode()
    lines = [re.sub(r"\x1b\[K", "", part).strip() for part in screen.split("\r")]
    embedding = [x for x in lines if x.startswith("embedding ")]
    assert embedding, lines
    assert re.fullmatch(r"embedding 30/30 files · 0/\d[\d.k]* word pieces · "
                        r"(estimating time left|\S+ left) · now \d+ chunks of note_00\.md "
                        r"and 29 more files", embedding[0]), embedding[0]
    done = [x for x in lines if x.startswith("done ")]
    assert done and re.fullmatch(r"done 30/30 files · ([\d.k]+)/\1 word pieces · [\d.k]+ pieces/s",
                                 done[-1]), done
    assert "30 added" in proc.stdout
