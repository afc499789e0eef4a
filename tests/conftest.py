"""Shared pytest configuration. Each section belongs to one area; add yours as a new section."""

# --- Rust core (tests/test_core_*.py): the `core` fixture, parametrised over ['rust', 'reference'] ---
from core_fixtures import core

__all__ = ['core']

# --- providers (tests/test_providers_*.py): the loopback replay server ---
from provider_fixtures import server

__all__ += ['server']

# --- tool loop (tests/test_tool_loop.py, test_loop_guards.py, test_events.py, ...): `run_loop` over call/acall/stream ---
from loop_fixtures import run_loop

__all__ += ['run_loop']

# --- Redis (memory, run-state stores, durable, content tests): `redis_url`, a redis-server of its own ---
from redis_fixtures import redis_url

__all__ += ['redis_url']
