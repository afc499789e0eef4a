"""Shared test support: fixtures and helpers imported as ``support.<module>`` (``tests/`` is on ``sys.path``).

``tests/conftest.py`` registers the pytest fixtures defined here (``core``, ``server``, ``run_loop``, ``redis_url``).
"""
