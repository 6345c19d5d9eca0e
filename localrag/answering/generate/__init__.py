"""The answer loops: Self-RAG (reflection tokens) and instruct models (a critic)."""
