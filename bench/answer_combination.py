"""Issue 17: which signals, combined, pick the answering sentence from a question's pool?
Prints figures, asserts nothing.

    python bench/answer_combination.py --model-dir DIR [--fit-on loo|vim|...]

For every judged pool (bench/sentence_pools.py) the candidates are recomputed from the
pool's passages as the answer path computes them (extract.candidates_of, the quote scorer's
features) and matched to the judged ones by passage and offset (a candidate the pool lacks,
from a later change of the candidate rules, is left out). Each gets the relevance model's
logit (the model in DIR) and the named features of extract.answer_features. A logistic
combination is fitted on the corpora named by --fit-on (loo: each measured corpus in turn is
left out and the others fit) and measured on the corpus left out with pool_quality's
figures (P@1, hit@4, AUC, role rules).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from pool_quality import RULES, evaluate, fit_logistic, logit, show  # noqa: E402
from sentence_pools import labels_of, load_pool  # noqa: E402

from answer_shape import SHAPE_FEATURES, shape_features  # noqa: E402

MEASURED = ("postgres", "debref", "zsh")
ROLE_GRID = tuple((round(f, 3), r, k) for f in np.arange(0.0, 0.81, 0.025)
                  for r in (0.3, 0.5, 0.7, 0.9, 1.0) for k in (1, 2, 3, 4))
CHOSEN_RULE = (0.2, 0.5, 4)    # replaced by the one chosen with --choose-rule
RULES_KEY = ""                  # --rules-key: the features cached under an earlier version of the rules


def product(questions: list[dict], names: list[str]) -> list[tuple[list[int], list[float]]]:
    """Per question (labels, the answer path's probabilities): extract.answer_probability
    of each candidate's features (the shipped ANSWER_COMBINATION)."""
    from localrag.answering.generate.extract import answer_probability

    return [(q["labels"], [answer_probability(dict(zip(names, row))) for row in q["x"]], q["follows"])
            for q in questions]


def matched(corpus: str, questions: list[dict]):  # noqa: ANN201 - an iterator
    """Per cached question: (question, its passages' texts, its judged candidates recomputed
    from the pool's passages as the answer path computes them, matched by passage and
    offset; None when they no longer match the cached rows, a candidate rule having changed
    since the cache)."""
    from localrag.answering.generate import extract as ex

    pool = {r["qid"]: r for r in load_pool(corpus)}
    for q in questions:
        r = pool[q["qid"]]
        texts = [p["text"] for p in r["passages"]]
        judged = {(c["passage"] - 1, c["start"]) for c in r["candidates"]}
        keep = [c for c in ex.candidates_of(r["question"], texts) if (c.passage, c.span.start) in judged]
        yield q, r, texts, keep if len(keep) == len(q["labels"]) else None


def add_follows(corpus: str, questions: list[dict]) -> int:
    """Sets each question's "follows" (pool_quality.evaluate: per candidate, the candidate it
    comes right after in its passage with only white space between, else -1), so that the
    figures count ✔ units as the answer path shows them, chosen sentences that follow each
    other as one excerpt (extract.excerpts, run over all of them). A question whose cached
    candidates no longer match (matched) keeps every sentence apart. Returns how many."""
    from localrag.answering.generate import extract as ex

    apart = 0
    for q, _, texts, keep in matched(corpus, questions):
        q["follows"] = [-1] * len(q["labels"])
        if keep is None:
            apart += 1
            continue
        # the product's own grouping (extract.excerpts) over every judged sentence as a quote
        quotes = [ex.Quote(c.passage, c.span, 0.0, ex.code_after(texts[c.passage], c.span)) for c in keep]
        index = {id(x): k for k, x in enumerate(quotes)}
        for run in ex.excerpts(quotes, texts):
            for before, after in zip(run, run[1:]):
                q["follows"][index[id(after)]] = index[id(before)]
    return apart


def add_shapes(corpus: str, questions: list[dict]) -> int:
    """Appends SHAPE_FEATURES to each question's rows (matched as add_follows matches);
    a question whose candidates no longer match gets zeros. Returns how many did."""
    from localrag.answering.generate import extract as ex

    apart = 0
    for q, r, texts, keep in matched(corpus, questions):
        if keep is None:
            apart += 1
            rows = [[0.0] * len(SHAPE_FEATURES) for _ in q["labels"]]
        else:
            rows = []
            for c in keep:
                sub = ex.subject_of(texts[c.passage], c.span)
                rows.append(shape_features(r["question"], c.span.text, sub.text if sub else ""))
        q["x"] = [list(x) + row for x, row in zip(q["x"], rows)]
        if list(SHAPE_FEATURES) != q["names"][-len(SHAPE_FEATURES):]:
            q["names"] = list(q["names"]) + list(SHAPE_FEATURES)
    return apart


def model_key(model_dirs: list[Path]) -> str:
    return hashlib.sha1(b"".join((d / f).read_bytes() for d in model_dirs
                                 for f in ("relevance.int8.onnx", "relevance.json"))).hexdigest()[:12]


def rules_key() -> str:
    """The candidate and subject rules the features were computed with (extract.py's and
    source_code.py's source):
    a change to them makes a new cache instead of reusing features of the rules before."""
    from localrag.answering.generate import extract, source_code

    return hashlib.sha1(b"".join(Path(m.__file__).read_bytes() for m in (extract, source_code))).hexdigest()[:8]


def judged_candidates(corpus: str):  # noqa: ANN201 - an iterator
    """Per judged question of the pool: (pool row, passage texts, titles, the candidates the
    answer path computes from them, {(passage, start): label} of the judged ones, the
    indices of the candidates that were judged); questions with none are skipped."""
    from localrag.answering.generate import extract as ex

    labels = labels_of(corpus)
    for r in load_pool(corpus):
        lab = labels.get(r["qid"])
        if lab is None:
            continue
        texts = [p["text"] for p in r["passages"]]
        titles = [p["title"] for p in r["passages"]]
        cands = ex.candidates_of(r["question"], texts)
        judged = {(c["passage"] - 1, c["start"]): y for c, y in zip(r["candidates"], lab)}
        keep = [k for k, c in enumerate(cands) if (c.passage, c.span.start) in judged]
        if keep:
            yield r, texts, titles, cands, judged, keep


def pool_features(corpus: str, model_dirs: list[Path], emb) -> list[dict]:  # noqa: ANN001
    """Per judged question: {"qid", "labels", "names", "x"} (x: one row of features per
    matched candidate), cached under bench/out/pools/ by the relevance model and extract.py's
    source."""
    from indexer.relevance_model import RelevanceModel
    from localrag.answering.generate import extract as ex

    cache = HERE / "out" / "pools" / f"feats-{corpus}-{model_key(model_dirs)}-{RULES_KEY or rules_key()}.json"
    if cache.exists():
        return json.loads(cache.read_text())
    rms = [RelevanceModel(d) for d in model_dirs]
    out = []
    for r, texts, titles, cands, judged, keep in judged_candidates(corpus):
        feats, probs = ex.score_candidates(r["question"], texts, cands, emb.encode)
        unit_texts = [ex.answer_text(texts[c.passage], c.span, titles[c.passage]) for c in cands]
        model = np.mean([rm.logits(r["question"], unit_texts) for rm in rms], axis=0)   # an ensemble: the mean
        rows = ex.answer_features(r["question"], texts, titles, cands, feats, probs, model)
        names = list(rows[0])
        out.append({"qid": r["qid"], "labels": [judged[(cands[k].passage, cands[k].span.start)] for k in keep],
                    "names": names, "x": [[rows[k][n] for n in names] for k in keep]})
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps(out))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model-dir", required=True, help="a relevance model, or several (comma): their mean logit")
    ap.add_argument("--model-for", default="",
                    help="CORPUS=DIR,...: another relevance model for these corpora's pools (out-of-fold "
                         "logits: a model trained without that corpus, so that a combination fitted on a "
                         "pool sees the model as it reads a corpus it never trained on)")
    ap.add_argument("--corpora", default=",".join(MEASURED))
    ap.add_argument("--fit-on", default="loo", help="loo, or corpora to fit on (e.g. vim)")
    ap.add_argument("--features", default="", help="a comma list of feature names (default: all)")
    ap.add_argument("--l2", type=float, default=1e-2)
    ap.add_argument("--rules-key", default="",
                    help="use the features cached under this key of the candidate rules (an experiment "
                         "on an earlier version of the candidate rules; the figures of the shipped constants "
                         "come from the current one)")
    ap.add_argument("--shapes", action="store_true",
                    help="add SHAPE_FEATURES (the question's kind against the sentence's shape; an experiment)")
    ap.add_argument("--choose-rule", action="store_true",
                    help="also choose the role rule on the --fit-on pools (ROLE_GRID, the issue's targets: "
                         "progress to a ✔ share of 0.6 plus progress to 0.75 of the questions answered) and "
                         "print the constants for extract.py")
    args = ap.parse_args()
    globals()["RULES_KEY"] = args.rules_key
    from indexer.embedder import Embedder

    emb = Embedder()
    model_dir = [Path(d) for d in args.model_dir.split(",")]
    measured = args.corpora.split(",")
    fit_on = [] if args.fit_on == "loo" else args.fit_on.split(",")
    model_for = {c: [Path(d)] for c, d in (x.split("=", 1) for x in args.model_for.split(",") if x)}
    data = {c: pool_features(c, model_for.get(c, model_dir), emb) for c in dict.fromkeys(measured + fit_on)}
    apart = {c: add_follows(c, qs) for c, qs in data.items()}
    if args.shapes:
        print("shapes: questions kept at zeros, " + ", ".join(f"{c} {add_shapes(c, qs)}" for c, qs in data.items()))
    print("✔ units counted as shown: chosen sentences that follow each other in a passage are one "
          "excerpt (extract.excerpts); questions whose cached candidates no longer match, kept apart: "
          + ", ".join(f"{c} {k}" for c, k in apart.items()))
    names = data[measured[0]][0]["names"]
    use = [names.index(n) for n in args.features.split(",")] if args.features else list(range(len(names)))
    print(f"features: {', '.join(names[i] for i in use)}")

    def xy(corpora):  # noqa: ANN001, ANN202
        x = np.vstack([np.array(q["x"])[:, use] for c in corpora for q in data[c]])
        y = np.concatenate([np.array(q["labels"]) == 2 for c in corpora for q in data[c]]).astype(float)
        return x, y

    if args.choose_rule:
        if not fit_on:
            raise SystemExit("--choose-rule needs --fit-on CORPORA (the pools the constants are chosen on)")
        x, y = xy(fit_on)
        mu, sd = x.mean(0), x.std(0) + 1e-9
        w = fit_logistic((x - mu) / sd, y, l2=args.l2)
        raw = {names[i]: round(float(wi / sd[j]), 4) for j, (i, wi) in enumerate(zip(use, w[:-1]))}
        raw["bias"] = round(float(w[-1] - sum(wi * mu[j] / sd[j] for j, wi in enumerate(w[:-1]))), 4)
        qs = []
        for c in fit_on:
            for q in data[c]:
                z = np.array(q["x"])[:, use] @ np.array([raw[names[i]] for i in use]) + raw["bias"]
                qs.append((q["labels"], list(1 / (1 + np.exp(-z))), q["follows"]))
        res = evaluate(qs, rules=ROLE_GRID)
        n = res["n"]

        def progress(rule):  # noqa: ANN001, ANN202
            shown, hit, answered = res["rules"][rule]
            return min(hit / max(shown, 1) / 0.6, 1.0) + min(answered / n / 0.75, 1.0)

        rule = max(ROLE_GRID, key=lambda r: (round(progress(r), 9), -r[2], r[0]))
        shown, hit, answered = res["rules"][rule]
        print(f"chosen on {'+'.join(fit_on)} ({n} questions): ✔ at >= {rule[0]:g} and >= {rule[1]:g} x best, "
              f"at most {rule[2]}: share {hit / max(shown, 1):.3f}, answered {answered / n:.3f}")
        print(f"ANSWER_COMBINATION = {raw}")
        print(f"QUOTE_ANSWER_FLOOR = {rule[0]:g}; ANSWER_MODEL_RELATIVE = {rule[1]:g}; ANSWER_MAX = {rule[2]}")
        globals()["CHOSEN_RULE"] = rule

    for name in measured:
        train = fit_on or [c for c in measured if c != name]
        x, y = xy(train)
        mu, sd = x.mean(0), x.std(0) + 1e-9
        w = fit_logistic((x - mu) / sd, y, l2=args.l2)
        print(f"{name} (fitted on {'+'.join(train)}): " + ", ".join(
            f"{names[i]} {wi / sd[j]:+.3f}" for j, (i, wi) in enumerate(zip(use, w[:-1]))))
        qs = []
        for q in data[name]:
            z = ((np.array(q["x"])[:, use] - mu) / sd) @ w[:-1] + w[-1]
            qs.append((q["labels"], list(1 / (1 + np.exp(-z))), q["follows"]))
        show("fit", evaluate(qs, rules=RULES + ((CHOSEN_RULE,) if args.choose_rule else ())))
        if args.choose_rule:
            from localrag.answering.generate.extract import ANSWER_MAX, ANSWER_MODEL_RELATIVE, QUOTE_ANSWER_FLOOR

            show("shipped (extract.ANSWER_COMBINATION and its rule)", evaluate(product(data[name], names), rules=(
                RULES + ((QUOTE_ANSWER_FLOOR, ANSWER_MODEL_RELATIVE, ANSWER_MAX),))))
        model_at = names.index("model")
        show("model alone", evaluate([(q["labels"], list(1 / (1 + np.exp(-np.array(q["x"])[:, model_at]))),
                                       q["follows"]) for q in data[name]]))


if __name__ == "__main__":
    main()
