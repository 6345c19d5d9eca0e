"""End to end through real llama.cpp: SmolLM2-135M-Instruct answers from three notes with
the critic chosen for it (the embedding + lexical critic, see critics.MEASURED)."""

from __future__ import annotations

from conftest_models import smollm2_model, smollm2_path  # noqa: F401  (pytest fixtures)
from instruct_fixtures import embed  # noqa: F401
from indexer.records import Passage
from localrag.answering.generate.instruct import InstructEngine
from localrag.answering.generate.selfrag import EngineConfig


def note(i: int, title: str, text: str) -> Passage:
    return Passage(chunk_id=i, path=f"/home/me/notes/{title}", title=title, text=text,
                   start_line=1, end_line=3, page=None, char_start=0, char_end=len(text),
                   score=1.0)


NOTES = [
    note(1, "garden.md", "Tomatoes: sow indoors in early March and plant them out after "
         "the last frost, around mid May. Water at the base, never the leaves."),
    note(2, "cabin.md", "Cabin checklist. The key is under the blue flower pot by the back "
         "door. The wifi password at the cabin is birch-canoe-42."),
    note(3, "recipes.md", "Banana bread: mash 3 ripe bananas, mix with 75 g melted butter "
         "and 150 g sugar, then bake 60 minutes at 175 C."),
]


def test_smollm2_answers_from_the_relevant_note_with_embedding_labels(smollm2_model, embed, monkeypatch):  # noqa: F811
    from localrag.answering.generate import instruct

    monkeypatch.setattr(instruct, "PASSAGES_CHECKED", True)     # the verdicts' gate met (below)
    engine = InstructEngine.for_model(smollm2_model, config=EngineConfig(k=3, max_tokens=48),
                                      embed=embed)
    streamed = []
    ans = engine.answer("What is the wifi password at the cabin?",
                        retrieve=lambda q, k: NOTES[:k], on_segment=streamed.append)
    print("\n", ans.text, [(s.label, s.citation) for s in ans.segments], ans.notes)
    assert ans.critic == "embedding+lexical" == engine.critic_name
    # the request-kind decision (localrag/answering/decide.py): a question about the notes
    assert ans.decision.retrieved and ans.decision.probability > EngineConfig().threshold
    # with the verdicts' gate met (extract.PASSAGES_CHECKED; as shipped since stop 57 it is
    # not, and no passage is judged: tests/test_instruct_engine.py), each passage is judged
    # by the relevance model's best sentence:
    # the cabin note holds the answer, the other two do not; the critic's score still ranks
    print([(j.passage.title, j.relevant, j.verdict, j.answer_probability) for j in ans.passages])
    assert [(j.passage.title, j.relevant) for j in ans.passages if j.verdict == "answers"] == [
        (j.passage.title, j.passage.title == "cabin.md") for j in ans.passages]
    assert max(range(3), key=lambda i: ans.passages[i].relevance) == 1
    assert engine.last_generate_calls == 1
    assert ans.segments and streamed == ans.segments
    assert ans.segments[0].passage.title == "cabin.md"
    with_code = [s for s in ans.segments if "birch-canoe-42" in s.text]
    assert with_code and all(s.passage.title == "cabin.md" for s in with_code)
    assert any(s.label == "fully" for s in with_code)
    assert all(s.label in ("fully", "partially", "none", "unchecked") for s in ans.segments)


def test_smollm2_without_retrieval_labels_its_own_knowledge(smollm2_model, embed):  # noqa: F811
    engine = InstructEngine.for_model(smollm2_model, config=EngineConfig(k=3, max_tokens=32),
                                      embed=embed)
    ans = engine.answer("What is the capital of France?", retrieve=lambda q, k: NOTES[:k])
    print("\n", ans.text, ans.decision.reason)
    assert not ans.decision.retrieved and ans.decision.probability < 0.2
    assert ans.segments and all(s.label == "no_retrieval" and s.citation is None
                                for s in ans.segments)


SERVER = note(4, "server.md > Home server > Move",
              "# Home server\n\n## Move\n\nWe moved the home server to the basement on 12 March "
              "2024 because the attic got too hot in summer.\n\n## Backups\n\nBackups run "
              "nightly at 02:00 to the NAS.")


def test_smollm2_answers_from_a_note_with_markdown_headings(smollm2_model, embed):  # noqa: F811
    """With '#' heading markers in its prompt SmolLM2 copied the note's last section
    ("Backups run nightly ...") instead of answering; headings reach it as "Move:" lines."""
    engine = InstructEngine.for_model(smollm2_model, config=EngineConfig(k=2, max_tokens=48),
                                      embed=embed)
    for question, expected in (("When did we move the home server?", "12 March 2024"),
                               ("How often do backups run?", "nightly")):
        ans = engine.answer(question, retrieve=lambda q, k: [SERVER, NOTES[0]][:k])
        print("\n", question, "->", ans.text)
        assert expected in ans.text
        assert "#" not in ans.text
        assert ans.segments[0].passage == SERVER
