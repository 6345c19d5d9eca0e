"""Notes in other scripts are quoted and judged like English ones: a word is a word of any
script (a letter with its combining marks), the danda ends a Hindi sentence and "。" a
Chinese or Japanese one. Before, the answer path read only ASCII letters as words: every
Russian, Greek or Hindi sentence was "filler" (no content word), so none was ever quoted;
Chinese and Japanese, which put no space after a full stop, read as one sentence a
paragraph."""

from __future__ import annotations

import pytest

from localrag.answering.generate.extract import candidate_units
from localrag.answering.judge import lexical
from localrag.answering.judge.noise import noise_kind

NOTES = {
    "ru": ("Запасной ключ от квартиры лежит у моей сестры в Москве.",
           "Отопление проверяют каждый год в октябре."),
    "el": ("Το εφεδρικό κλειδί είναι στην αδελφή μου στην Αθήνα.",
           "Ο λέβητας ελέγχεται κάθε Οκτώβριο."),
    "hi": ("अतिरिक्त चाबी मेरी बहन के पास दिल्ली में है।",
           "हीटर की सर्विस हर साल अक्टूबर में होती है।"),
    "de": ("Der Ersatzschlüssel liegt bei meiner Schwester in Düsseldorf.",
           "Die Heizung wird jedes Jahr im Oktober gewartet."),
}
NO_SPACES = {     # Chinese and Japanese: no space after the stop, a word a character
    "zh": ("我的备用钥匙在姐姐家。", "暖气每年十月检修。"),
    "ja": ("合鍵は妹の家にあります。", "「暖房」は毎年十月に点検します。"),
}


@pytest.mark.parametrize("lang", sorted(NOTES) + sorted(NO_SPACES))
def test_each_sentence_of_a_note_is_a_quote(lang):
    first, second = NOTES.get(lang) or NO_SPACES[lang]
    assert noise_kind(first) is None and noise_kind(second) is None
    gap = "" if lang in NO_SPACES else " "
    assert [u.text for u in candidate_units(first + gap + second)] == [first, second]


def test_stacked_stops_end_one_sentence():
    assert lexical.split_sentences("本当ですか！？ はい。") == ["本当ですか！？", "はい。"]
    assert lexical.split_sentences("什么？！好的。") == ["什么？！", "好的。"]


def test_words_keep_their_marks_and_letters():
    assert lexical.content_words("हीटर की सर्विस")[:2] == ["हीटर", "की"]
    assert "ersatzschlüssel" in lexical.content_words(NOTES["de"][0])
    assert lexical.key_tokens("Loïc Minier wrote it") == ["loïc", "minier"]


def test_a_changed_fact_in_cyrillic_is_caught_by_overlap():
    """The critic's overlap reads Cyrillic words: a sentence naming another city misses a key."""
    passage = NOTES["ru"][0]
    assert lexical.overlap("Запасной ключ лежит у моей сестры в Москве.", passage).key_frac == 1.0
    changed = lexical.overlap("Запасной ключ лежит у моего брата в Казани.", passage)
    assert changed.missing_keys == ("казани",)


def test_a_real_index_finds_notes_in_other_scripts_by_a_word_inside(tmp_path, make_index):
    """Real index (SQLite, hnswlib, BM25), real embedder (an English model: these lookups
    rest on BM25): a word typed alone finds the note that holds it inside a sentence."""
    folder = tmp_path / "notes"
    folder.mkdir()
    files = {
        "ja.md": "# メモ\n\n東京タワーは333メートルです。合鍵は妹の家にあります。\n",
        "zh.md": "# 笔记\n\n我的备用钥匙在姐姐家。暖气每年十月检修。\n",
        "hi.md": "# नोट्स\n\nअतिरिक्त चाबी मेरी बहन के पास दिल्ली में है।\n",
        "ru.md": "# Заметки\n\nЗапасной ключ от квартиры лежит у моей сестры в Москве.\n",
    }
    for i in range(12):
        files[f"en{i}.md"] = f"# Note {i}\n\nThe spare key, the heating and the tower are notes in English, number {i}.\n"
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    idx = make_index()
    idx.add_root(folder)
    idx.update()
    for query, file in [("合鍵", "ja.md"), ("钥匙", "zh.md"), ("दिल्ली", "hi.md"), ("сестры", "ru.md")]:
        hits = idx.search(query, k=3)
        assert hits and hits[0].path.endswith(file), (query, [h.path for h in hits])
