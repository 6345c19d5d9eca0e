"""What the generated-file rule (indexer/doc_builds.py) costs the walk: prints figures,
asserts nothing.

    python bench/bench_walk_sites.py [FOLDER]      # default /usr/share

The walk (indexer.walk.scan, no file read) of FOLDER with the rule and with it switched off
(DocBuilds.reason patched to None here), in turns, 3 runs each on one warm page cache;
p50 seconds, files listed and skipped. On /usr/share the rule reads each folder's listing,
which the walk has already, and opens a generator's index file only where its name is there.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from indexer import doc_builds  # noqa: E402
from indexer.options import IndexOptions  # noqa: E402
from indexer.walk import scan  # noqa: E402


def main() -> None:
    root = sys.argv[1] if len(sys.argv) > 1 else "/usr/share"
    shipped = doc_builds.DocBuilds.reason
    times: dict[str, list[float]] = {"with the rule": [], "without": []}
    counts: dict[str, tuple[int, int]] = {}
    scan([(root, root)], IndexOptions())          # warm the page cache
    for _ in range(3):
        for label in times:
            doc_builds.DocBuilds.reason = shipped if label == "with the rule" else (
                lambda self, path, *, is_dir: None)
            t0 = time.perf_counter()
            result = scan([(root, root)], IndexOptions())
            times[label].append(time.perf_counter() - t0)
            generated = sum(s.kind == "generated" for s in result.skips.values())
            counts[label] = (len(result.candidates), generated)
    doc_builds.DocBuilds.reason = shipped
    for label, ts in times.items():
        files, generated = counts[label]
        print(f"{label:14} walk p50 {statistics.median(ts):.2f} s (runs {', '.join(f'{t:.2f}' for t in ts)}); "
              f"{files} files to index, {generated} skipped as generated")
    print(f"ratio {statistics.median(times['with the rule']) / statistics.median(times['without']):.2f}")


if __name__ == "__main__":
    main()
