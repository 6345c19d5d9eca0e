"""Record the real default model's answers over tests/data/gitdocs for the snapshot tests.

    PYTHONPATH=$PWD HF_HUB_OFFLINE=1 python scripts/record_real_answers.py

Indexes a copy of the corpus in a temporary data directory with the real embedder, asks
each question of QUESTIONS through the real Assistant (SmolLM2-135M-Instruct, settings
REAL_SETTINGS) and writes tests/data/real_answers.json: {question: Answer.to_json()} with
source paths relative to the corpus folder. Re-run it when the corpus, the chunker or the
engine changes (tests/test_tui_real_corpus.py says when the recorded passages no longer
match the index).
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
CORPUS = REPO / "tests" / "data" / "gitdocs"
OUT = REPO / "tests" / "data" / "real_answers.json"

REAL_SETTINGS = {"n_threads": 1, "k": 3, "max_tokens": 160, "watch": False}
"""What the real-data tests run with (one thread: greedy output does not depend on how
llama.cpp splits work between threads)."""

QUESTIONS = [
    "How do I create a new git repository for an existing project? Show the commands.",
]


def main() -> int:
    sys.path.insert(0, str(REPO))
    from localrag.assistant import Assistant

    with tempfile.TemporaryDirectory() as tmp:
        corpus = Path(tmp) / "gitdocs"
        shutil.copytree(CORPUS, corpus)
        with Assistant.open(Path(tmp) / "data", overrides=REAL_SETTINGS) as assistant:
            assistant.add_root(corpus)
            assistant.update_index()
            recorded = {}
            for question in QUESTIONS:
                answer = assistant.ask(question, save=False)
                data = answer.to_json()
                for source in data["sources"]:
                    source["path"] = str(Path(source["path"]).relative_to(corpus))
                recorded[question] = data
                print(f"{question}\n{answer.text}\n", flush=True)
    OUT.write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
