"""Judging passages and sentences: reflection tokens, fallback critics, noise, scores."""
