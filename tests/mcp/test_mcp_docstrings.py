"""The ``>>>`` examples in toolweave.mcp's docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ['toolweave.mcp.naming', 'toolweave.mcp.filters', 'toolweave.mcp.server', 'toolweave.mcp.provider']


@pytest.mark.parametrize('name', MODULES)
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
