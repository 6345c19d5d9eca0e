"""Every path localrag uses, in one place.

The data directory holds the index (SQLite + HNSW), saved chats and the settings file.
Precedence: an explicit `--data-dir`, then `$LOCALRAG_HOME`, then the platform's user
data directory (platformdirs).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

APP_NAME = "localrag"


def default_data_dir() -> Path:
    env = os.environ.get("LOCALRAG_HOME")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def default_cache_dir() -> Path:
    """Re-creatable files (the CPU copy of a model): $LOCALRAG_CACHE_DIR, else the
    platform's user cache folder. Shared by every data directory."""
    env = os.environ.get("LOCALRAG_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs

    return Path(platformdirs.user_cache_dir(APP_NAME, appauthor=False))


@dataclass(frozen=True)
class Paths:
    """The files inside one data directory."""

    data_dir: Path

    @classmethod
    def resolve(cls, data_dir: str | os.PathLike[str] | None = None) -> "Paths":
        base = Path(data_dir).expanduser() if data_dir else default_data_dir()
        return cls(base.resolve())

    @property
    def index_dir(self) -> Path:
        return self.data_dir / "index"

    @property
    def settings_file(self) -> Path:
        return self.data_dir / "settings.toml"

    @property
    def chats_db(self) -> Path:
        return self.data_dir / "chats.db"

    @property
    def models_dir(self) -> Path:
        """Where a person may drop GGUF files; `localrag models` lists them."""
        return self.data_dir / "models"

    @property
    def model_cache_dir(self) -> Path:
        """Where CPU copies of model files are kept (models/cpu_copy.py)."""
        return default_cache_dir() / "models"

    def ensure(self) -> "Paths":
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.index_dir.mkdir(parents=True, exist_ok=True)
        return self
