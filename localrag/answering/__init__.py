"""How localrag answers a question, one stage per place:

1. decide   (decide.py)        whether to search the files: a Self-RAG model's own
                               [Retrieval] token (generate/selfrag.py); for instruct
                               models the kind of request
2. retrieve (retrieve.py)      a self-contained search query for a follow-up question;
                               the search itself is the indexer's (indexer.search)
3. judge    (judge/)           passage relevance and sentence support: the Self-RAG
                               reflection tokens read as probabilities (critique.py),
                               the fallback critics for instruct models (critics.py,
                               model_critic.py), noise detection (noise.py), word
                               overlap (lexical.py), the scoring formulas (scoring.py),
                               the judgement type (judgement.py); how critics are
                               measured is in bench/critic_evaluation.py
4. generate (generate/)        the two answer loops (selfrag.py, instruct.py), the
                               trained Self-RAG prompt (prompting.py), and quotes from
                               the passages (extract.py)
5. label    (label/)           what a person reads: the units an answer is cut into
                               (units.py), the answer with a label and citation per unit
                               (answer.py), and its text / Markdown rendering (render.py)

The facade (localrag.assistant) wires these to the index and the model; nothing in
this package imports the UI.
"""
