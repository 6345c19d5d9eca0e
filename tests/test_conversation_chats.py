"""Follow-up questions become self-contained queries; chats persist in SQLite."""

from __future__ import annotations

from pathlib import Path

from localrag.chats import ChatStore
from localrag.answering.retrieve import is_follow_up, self_contained_query


def test_follow_up_gets_previous_topic() -> None:
    history = [("Who designed the Lisbon aqueduct?", "Manuel da Maia designed it.")]
    query = self_contained_query("and when was it built?", history)
    assert query.startswith("and when was it built?")
    assert "lisbon" in query and "aqueduct" in query


def test_standalone_question_is_unchanged() -> None:
    history = [("Who designed the Lisbon aqueduct?", "Manuel da Maia.")]
    q = "What is the boiling point of water at sea level?"
    assert not is_follow_up(q)
    assert self_contained_query(q, history) == q
    assert self_contained_query("and when was it built?", []) == "and when was it built?"


def test_chat_store_round_trip(tmp_path: Path) -> None:
    store = ChatStore(tmp_path / "chats.db")
    chat = store.new_chat()
    store.add_turn(chat, "First question?", "First answer.", {"answer": "First answer."})
    store.add_turn(chat, "Second?", "Second answer.", {"segments": []})
    store.close()

    reopened = ChatStore(tmp_path / "chats.db")
    [summary] = reopened.chats()
    assert summary.title == "First question?"
    assert summary.turns == 2
    turns = reopened.turns(chat)
    assert [t.question for t in turns] == ["First question?", "Second?"]
    assert turns[0].answer_json == {"answer": "First answer."}
    reopened.delete_chat(chat)
    assert reopened.chats() == []
