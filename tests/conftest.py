"""Shared pytest configuration. Each section belongs to one area; add yours as a new section."""

# --- Rust core (tests/test_core_*.py): the `core` fixture, parametrised over ['rust', 'reference'] ---
from core_fixtures import core

__all__ = ['core']

# --- providers (tests/test_providers_*.py): the loopback replay server ---
from provider_fixtures import server

__all__ += ['server']
