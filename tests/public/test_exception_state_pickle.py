"""toolweave's exceptions keep their instance state (``add_note`` notes, attributes set after raising)
through pickle, ``copy.copy`` and ``copy.deepcopy``, as the default ``BaseException.__reduce__`` does:
each class's own ``__reduce__`` rebuilds it from its constructor arguments and carries the dict too."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest
from toolweave.exceptions import (
    InvalidToolArgumentsError,
    SchemaValidationError,
    StreamFormatError,
    ToolArgumentsError,
    ToolCallLimitExceededError,
    ToolExecutionError,
    ToolRetryBudgetExceededError,
)
from toolweave.tools.definition import ToolDefinition

_DEFINITION = ToolDefinition('t', 'd', {'type': 'object', 'properties': {}})


@pytest.mark.parametrize(
    'error',
    [
        ToolArgumentsError('bad json', 3, 'exc', 1, 4),
        SchemaValidationError('bad', [{'pointer': '/a', 'keyword': 'type', 'message': 'm'}]),
        StreamFormatError('bad event', 2, 'data: x'),
        ToolExecutionError(_DEFINITION, ValueError('boom')),
        ToolCallLimitExceededError('t', 2),
        InvalidToolArgumentsError('t', ['a: missing']),
        ToolRetryBudgetExceededError('t', 1, 'last'),
    ],
    ids=lambda e: type(e).__name__,
)
def test_exception_keeps_notes_and_attributes_through_pickle_and_copy(error: Exception) -> None:
    error.add_note('a note')
    error.extra = {'k': 1}  # type: ignore[attr-defined]
    copies: list[Any] = [pickle.loads(pickle.dumps(error)), copy.copy(error), copy.deepcopy(error)]
    for again in copies:
        assert type(again) is type(error) and again.args == error.args and str(again) == str(error)
        assert again.__notes__ == ['a note']
        assert again.extra == {'k': 1}
