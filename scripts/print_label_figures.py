"""Print the fallback critic's label figures on both halves of tests/data/critic_real
(issue 9): how many model sentences get each label, the precision of "fully", noise
labelled supported, relevance AUC. The constants were set on dev (scripts/tune_critic.py);
tests/test_critics.py checks the test figures that critics.MEASURED_TEST records.

    HF_HUB_OFFLINE=1 python scripts/print_label_figures.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> int:
    from indexer.embedder import Embedder
    from localrag.answering.judge.critics import EmbeddingCritic
    from critic_evaluation import format_real, load_real_set, measure_real

    embedder = Embedder()
    critic = EmbeddingCritic(embedder.encode)
    sentences, relevance = load_real_set()
    for split in ("test", "dev"):
        print(format_real(critic.name, split, measure_real(critic, sentences, relevance,
                                                           split=split)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
