"""Saved chats: every question and its answer (as JSON), in `chats.db` (SQLite).

Kept apart from the index database so that rebuilding or deleting the index never loses
a conversation.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlite_utils

SCHEMA_VERSION = 1


@dataclass
class ChatSummary:
    id: int
    title: str
    created_at: float
    updated_at: float
    turns: int


@dataclass
class Turn:
    id: int
    chat_id: int
    question: str
    answer_text: str
    answer_json: dict[str, Any]
    created_at: float


class ChatStore:
    """Chats and their turns. Safe to use from one thread at a time per instance."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        conn = sqlite3.connect(str(path), timeout=5.0, check_same_thread=False)
        conn.execute("PRAGMA journal_mode=WAL")
        self.db = sqlite_utils.Database(conn)
        self._migrate()

    def _migrate(self) -> None:
        version = self.db.execute("PRAGMA user_version").fetchone()[0]
        if version < 1:
            self.db["chats"].create(
                {"id": int, "title": str, "created_at": float, "updated_at": float},
                pk="id", if_not_exists=True,
            )
            self.db["turns"].create(
                {"id": int, "chat_id": int, "question": str, "answer_text": str,
                 "answer_json": str, "created_at": float},
                pk="id", foreign_keys=[("chat_id", "chats", "id")], if_not_exists=True,
            )
            self.db["turns"].create_index(["chat_id"], if_not_exists=True)
            self.db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def new_chat(self, title: str = "New chat") -> int:
        now = time.time()
        return int(self.db["chats"].insert(
            {"title": title, "created_at": now, "updated_at": now}).last_pk)

    def add_turn(self, chat_id: int, question: str, answer_text: str,
                 answer_json: dict[str, Any]) -> int:
        now = time.time()
        with self.db.conn:
            pk = self.db["turns"].insert({
                "chat_id": chat_id, "question": question, "answer_text": answer_text,
                "answer_json": json.dumps(answer_json), "created_at": now,
            }).last_pk
            chat = self.db["chats"].get(chat_id)
            updates: dict[str, Any] = {"updated_at": now}
            if chat["title"] == "New chat":
                updates["title"] = question.strip().splitlines()[0][:60] or "New chat"
            self.db["chats"].update(chat_id, updates)
        return int(pk)

    def chats(self) -> list[ChatSummary]:
        rows = self.db.execute(
            "select c.id, c.title, c.created_at, c.updated_at, count(t.id) "
            "from chats c left join turns t on t.chat_id = c.id "
            "group by c.id order by c.updated_at desc"
        ).fetchall()
        return [ChatSummary(*row) for row in rows]

    def turns(self, chat_id: int) -> list[Turn]:
        rows = self.db.execute(
            "select id, chat_id, question, answer_text, answer_json, created_at "
            "from turns where chat_id = ? order by id", [chat_id]
        ).fetchall()
        return [Turn(r[0], r[1], r[2], r[3], json.loads(r[4]), r[5]) for r in rows]

    def delete_chat(self, chat_id: int) -> None:
        with self.db.conn:
            self.db.execute("delete from turns where chat_id = ?", [chat_id])
            self.db.execute("delete from chats where id = ?", [chat_id])

    def close(self) -> None:
        self.db.conn.close()
