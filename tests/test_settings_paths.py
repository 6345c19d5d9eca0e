"""Settings file round trip, validation messages, and data-directory precedence."""

from __future__ import annotations

from pathlib import Path

import pytest

from localrag.errors import SettingsError
from localrag.paths import Paths
from localrag.settings import Settings


def test_settings_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "settings.toml"
    s = Settings()
    s.set("threshold", "0.35")
    s.set("strict", "yes")
    s.set("retrieval_mode", "always")
    s.set("extensions", ".md, .txt")
    s.save(path)
    loaded = Settings.load(path)
    assert loaded.threshold == pytest.approx(0.35)
    assert loaded.strict is True
    assert loaded.retrieval_mode == "always"
    assert loaded.extensions == [".md", ".txt"]
    assert loaded.to_dict() == s.to_dict()


def test_missing_file_gives_defaults(tmp_path: Path) -> None:
    assert Settings.load(tmp_path / "nope.toml") == Settings()


@pytest.mark.parametrize(
    "text, words",
    [
        ("threshold = 3.0\n", ["threshold", "out of range", "between 0 and 1"]),
        ("colour = 'red'\n", ["Unknown setting", "colour", "known settings"]),
        ("k = 'many'\n", ["wrong type", "'k'"]),
        ("retrieval_mode = 'sometimes'\n", ["retrieval_mode", "adaptive, always or never"]),
        ("threshold = \n", ["Cannot read the settings file", "delete"]),
    ],
)
def test_bad_settings_file_names_file_and_fix(tmp_path: Path, text: str, words: list[str]) -> None:
    path = tmp_path / "settings.toml"
    path.write_text(text)
    with pytest.raises(SettingsError) as info:
        Settings.load(path)
    message = str(info.value)
    for word in words:
        assert word in message
    assert str(path) in message


def test_every_setting_has_a_docstring() -> None:
    source = Path(__import__("localrag.settings").settings.__file__).read_text()
    for name in Settings.field_names():
        block = source.split(f"\n    {name}:", 1)[1].split("\n    \"\"\"", 1)
        assert len(block) == 2, f"setting {name} has no docstring"


def test_data_dir_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCALRAG_HOME", str(tmp_path / "home"))
    assert Paths.resolve().data_dir == (tmp_path / "home").resolve()
    assert Paths.resolve(tmp_path / "explicit").data_dir == (tmp_path / "explicit").resolve()
    monkeypatch.delenv("LOCALRAG_HOME")
    default = Paths.resolve().data_dir
    assert default.name == "localrag"
