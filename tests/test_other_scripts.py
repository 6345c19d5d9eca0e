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


class _RecordingJudge:
    """A passage judge that reads English only and records the questions it was asked."""

    languages = ("en",)

    def __init__(self) -> None:
        self.asked: list[str] = []

    def __call__(self, query, passages):  # noqa: ANN001
        self.asked.append(query)
        return [0.0] * len(passages)


def test_a_query_the_models_cannot_read_leans_on_bm25(tmp_path, make_index):
    """Real index, real embedder (all-MiniLM-L6-v2, an English model, so its card says
    "en"): a Japanese question is fused at OTHER_LANGUAGE_ALPHA, not ALPHA, and a judge that
    reads English only is not asked; an English question keeps ALPHA and the judge."""
    from indexer import search

    folder = tmp_path / "notes"
    folder.mkdir()
    notes = ["合鍵は妹の家にあります。東京の家の鍵も妹が持っています。",
             "家の暖房は毎年十月に点検します。点検の予約は管理会社に電話します。",
             "妹の誕生日は五月です。プレゼントは本にします。",
             "鍵をなくしたときは管理会社に連絡します。合鍵の作成には三日かかります。",
             "東京タワーは333メートルです。展望台は二つあります。",
             "The spare key is at my sister's flat. The heating is checked every October."]
    for i, text in enumerate(notes):
        (folder / f"n{i}.md").write_text(f"# メモ {i}\n\n{text}\n", encoding="utf-8")
    idx = make_index()
    idx.add_root(folder)
    idx.update()
    assert idx.embedder.languages == ("en",)
    query = "合鍵はどこにありますか"
    vectors = idx._vectors_index()
    dense, lexical = search.scored_rankings(vectors, idx.embedder.encode([query])[0], query, 50)
    pins = search.lexical_winners(lexical)
    at = {a: [cid for cid, _ in search.fuse(dense, lexical, pinned=pins, alpha=a)]
          for a in (search.ALPHA, search.OTHER_LANGUAGE_ALPHA)}
    assert at[search.ALPHA] != at[search.OTHER_LANGUAGE_ALPHA]   # the two weights tell apart here
    judge = _RecordingJudge()
    got = [p.chunk_id for p in idx.search(query, k=len(notes), judge=judge)]
    assert got == at[search.OTHER_LANGUAGE_ALPHA][:len(got)]
    assert judge.asked == []
    # nor does the learned ranker (English features) reorder it, judge or not
    for with_judge in (judge, None):
        ranked = [p.chunk_id for p in idx.search(query, k=len(notes), judge=with_judge, rerank=True)]
        assert ranked == got
    idx.search("where is the spare key?", k=3, judge=judge)
    assert judge.asked == ["where is the spare key?"]


@pytest.mark.parametrize("query, by_english, by_english_german_french", [
    ("合鍵はどこにありますか", False, False), ("где запасной ключ", False, False),
    ("पासवर्ड कैसे बदलें", False, False),
    ("apt-get の使い方", True, True),             # mostly Latin letters
    ("2024 ???", True, True),                    # no letters
    ("Où est le fichier de configuration par défaut ?", False, True),     # French, by py3langid
    ("Wie kann ich die Größe der Auslagerungsdatei ändern?", False, True),  # German
    ("vfat mounten Standard-Codepage", True, True),   # ASCII, no word of another language
    ("wie kann ich eine vfat partition mounten", False, True),  # ASCII German: two such words
    ("comment changer le mot de passe root", False, True),      # ASCII French
    ("How do I set up the café's printer?", True, True),   # a guess of English
    ("Où est le fichier de configuration par de\u0301faut ?", False, True),   # accents decomposed (NFD)
])
def test_reads_query_by_script_and_language(query, by_english, by_english_german_french):
    from indexer.language import reads_query

    assert reads_query(("en",), query) is by_english
    assert reads_query(("en", "de", "fr"), query) is by_english_german_french
    assert reads_query((), query) is True                  # unknown languages read everything
    assert reads_query(("en", "ja", "ru", "hi"), query) is True   # not only Latin script


def test_a_plain_ascii_query_never_loads_the_language_identifier(monkeypatch):
    """py3langid takes about 0.65 s to load: only a query with an accented Latin letter, or
    two words of another language that English lacks, asks it, and a failing identifier
    reads the query (never an error)."""
    from indexer import language

    asked: list[str] = []

    def guess(text):
        asked.append(text)
        raise AssertionError("not for ASCII")

    monkeypatch.setattr(language, "guess_language", guess)
    assert language.reads_query(("en",), "Where is the spare key? error E1234 --force")
    # English sharing one such word, or words that are English too ("die", "was", "on")
    assert language.reads_query(("en",), "Why does the daemon die when the config was on NFS?")
    assert language.reads_query(("en",), "set la variable PATH")
    # only words standing alone: not the "non" of "non-empty" or the "com" of "example.com"
    assert language.reads_query(("en",), "How do I add a comment to a non-empty file?")
    assert language.reads_query(("en",), "mail from des@example.com was rejected")
    assert asked == []
    monkeypatch.setattr(language, "guess_language", lambda text: None)
    assert language.reads_query(("en",), "Où est le fichier par défaut ?")


def test_a_language_identifier_that_fails_to_load_is_not_loaded_again(monkeypatch):
    import sys

    from indexer import language

    monkeypatch.setattr(language, "_identifier", None)
    monkeypatch.setitem(sys.modules, "py3langid.langid", None)    # the import fails
    assert language.guess_language("Où est le fichier par défaut ?") is None
    assert language._identifier is False
    monkeypatch.delitem(sys.modules, "py3langid.langid")         # would load now: not tried
    assert language.guess_language("Où est le fichier par défaut ?") is None
    assert language._identifier is False


def test_a_broken_language_identifier_reads_the_query(monkeypatch):
    from indexer import language

    class Broken:
        def classify(self, text):
            raise ValueError("bad model")

    monkeypatch.setattr(language, "_identifier", Broken())
    assert language.guess_language("Où est le fichier par défaut ?") is None
    assert language.reads_query(("en",), "Où est le fichier par défaut ?")


def test_model_card_languages(tmp_path):
    from indexer.embedder import model_card_languages

    cases = {"en": "language: en\n", "list": "language:\n- de\n- EN\n", "multi": "language: multilingual\n",
             "none": "license: mit\n", "broken": "language: [en\n", "number": "language: 1\n",
             "yes": "language: yes\n", "date": "language: 2020-01-01\n", "mixed": "language: [en, 3]\n"}
    for name, front in cases.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / "README.md").write_text(f"---\n{front}---\n# a model\n", encoding="utf-8")
    (tmp_path / "bom").mkdir()
    (tmp_path / "bom" / "README.md").write_text("\ufeff---\r\nlanguage: en\r\n---\r\n# a model\r\n",
                                               encoding="utf-8")
    assert model_card_languages(tmp_path / "en") == ("en",)
    assert model_card_languages(tmp_path / "list") == ("de", "en")
    assert model_card_languages(tmp_path / "multi") == ()
    assert model_card_languages(tmp_path / "none") == ()
    assert model_card_languages(tmp_path / "broken") == ()
    assert model_card_languages(tmp_path / "missing") == ()
    for odd in ("number", "yes", "date"):          # not a language: says nothing, never raises
        assert model_card_languages(tmp_path / odd) == ()
    assert model_card_languages(tmp_path / "mixed") == ("en",)
    assert model_card_languages(tmp_path / "bom") == ("en",)


@pytest.mark.parametrize("sentence", ["11.2.1. XML データー", "1.2. Unix-like ファイルシステム > 1.2.4.",
                                      "2.3.4. How to configure the package manager for proxies"])
def test_a_numbered_heading_is_no_sentence_in_any_language(sentence):
    """A model that copies a passage's heading (or its heading path) wrote no statement;
    counted by characters, a Japanese heading is too long for the few-words title rule."""
    assert noise_kind(sentence) == "fragment"


@pytest.mark.parametrize("sentence", ["1.2. The parser reads the file and then writes its output.",
                                      "Version 1.2.4 fixed the bug in the parser.",
                                      "1.5 GB of free disk space is needed for the full installation",
                                      "2.6.32 kernels and later support this option",
                                      "1.2. Upgrade the package to version 2.4.",
                                      "XML テキストはちょっと HTML のようにも見えます。"])
def test_a_sentence_with_a_section_number_is_still_a_sentence(sentence):
    assert noise_kind(sentence) is None


@pytest.mark.parametrize("sentence", [
    'DHCP クライアントの設定は "/etc/systemd/network/dhcp.network" を作成することで設定できます。',
    "サイズは KiB (Kibibyte = 1024 バイト単位) で表示されます。",
    '这些环境变量又能够通过设置 $LC_ALL"变量而被再次覆盖。',
    "Запустите команду ls -la /etc.",
    "passwd(1) によるとアカウント作成の際には良好なパスワードを選択するべきです。",   # a man page
])
def test_a_sentence_in_another_script_with_a_path_is_prose(sentence):
    """The code rule counts English function words; a Japanese or Chinese sentence has none,
    so one holding a path or "=" was "code" and never quoted (12 of 34 answering sentences of
    the Japanese Debian Reference questions, 8 of 31 Chinese)."""
    assert noise_kind(sentence) is None
    assert candidate_units("# t\n\n" + sentence + "\n")


@pytest.mark.parametrize("line", ["x = 1  # 设置", '$ ls -la /etc/ファイル。', 'print("你好")',
                                  "git stash pop --index", 'msg = "ファイルが見つかりません。"',
                                  "x = 1  # 設定します。", 'print("完了しました。")'])
def test_code_with_words_of_another_script_is_still_code(line):
    assert noise_kind(line) == "code"


def test_german_abbreviations_do_not_end_a_sentence():
    text = ("Der Installer erstellt diesen Eintrag als provisorische Lösung für einige Programme "
            "(z.B. GNOME). Das gilt bzw. galt auch für KDE. Er kauft Äpfel, Birnen usw. Danach "
            "geht er heim.")
    assert lexical.split_sentences(text) == [
        "Der Installer erstellt diesen Eintrag als provisorische Lösung für einige Programme (z.B. GNOME).",
        "Das gilt bzw. galt auch für KDE.", "Er kauft Äpfel, Birnen usw.", "Danach geht er heim."]


def test_lexical_shares_weigh_the_question_terms_a_sentence_holds():
    """For a question the relevance model cannot read, the quotes' order leans on the
    question's own terms (BM25's: Japanese as pairs of characters), rare ones weighing more."""
    from localrag.answering.generate.extract import candidates_of, lexical_shares

    text = ("# メモ\n\n合鍵は妹の家にあります。\n\n暖房は毎年十月に点検します。\n\n"
            "家の鍵は玄関の箱にあります。\n")
    cands = candidates_of("合鍵はどこ？", [text])
    shares = dict(zip([c.span.text for c in cands], lexical_shares("合鍵はどこ？", cands)))
    assert max(shares, key=shares.get) == "合鍵は妹の家にあります。"
    assert shares["暖房は毎年十月に点検します。"] == 0.0
    assert all(0.0 <= v <= 1.0 for v in shares.values())


def test_the_quotes_of_an_unread_question_lean_on_its_terms():
    import numpy as np

    from localrag.answering.generate.extract import choose_quotes

    def flat(texts):   # an embedding that tells nothing apart: only the terms can
        return np.ones((len(texts), 8), dtype=np.float32)

    text = ("# メモ\n\n暖房は毎年十月に点検します。\n\n点検の予約は管理会社に電話します。\n\n"
            "合鍵は妹の家にあります。\n")
    plain = choose_quotes("合鍵はどこ？", [text], flat, max_quotes=3)
    leaning = choose_quotes("合鍵はどこ？", [text], flat, max_quotes=3, lexical_weight=0.75)
    assert leaning.quotes[0].span.text == "合鍵は妹の家にあります。"
    assert len(plain.quotes) == len(leaning.quotes) == 3
    plain_gap, leaning_gap = (c.quotes[0].score - c.quotes[1].score for c in (plain, leaning))
    assert plain_gap < 0.2 < leaning_gap     # measured: 0.009 and 0.243


def test_a_sentence_opening_with_a_man_page_and_ending_in_a_bracket_is_prose():
    sentence = ('modprobe(8) 程序的配置文件是按 modprobe.conf(5)的说明放在"/etc/modprobes.d/" 目录下，'
                '(如果你想避免自动加载某些内核模块，考虑把它们作为黑名单放在"/etc/modprobes.d/blacklist" 文件里.)')
    assert noise_kind(sentence) is None
