"""The ``>>>`` examples in the approval modules' docstrings run and give what they show."""

import doctest
import importlib

import pytest


@pytest.mark.parametrize('name', ['toolweave.approvals', 'toolweave.runstate.sqlite'])
def test_docstring_examples(name: str) -> None:
    result = doctest.testmod(importlib.import_module(name), optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0
    assert result.failed == 0
