"""Fixtures of the content-part tests: a throwaway redis-server (shared with tests/test_memory.py)."""

from test_memory import redis_url

__all__ = ['redis_url']
