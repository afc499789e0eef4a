"""The slow path of ``MethodToolCallback`` as ``_values`` runs it, for tests comparing it with the fast paths."""

from __future__ import annotations

from typing import Any

import pydantic
from toolweave._native import parse_arguments
from toolweave.exceptions import ToolArgumentsError, ToolExecutionError
from toolweave.tools import MethodToolCallback
from toolweave.tools._numbers import extended_arguments


def slow_path(tool: MethodToolCallback, text: str) -> Any:
    """The core's strict parse, then each parameter validated on its own, given the one-step validation's errors.

    From those errors the slow path takes what a parameter's own validation cannot see: a repeated key's problems,
    a nested TypedDict's extras (it inherits the arguments' ``extra='forbid'``).
    """
    try:
        raw = parse_arguments(text)
    except ToolArgumentsError as exc:
        extended = extended_arguments(text)  # NaN/Infinity are read, and named as number problems
        if extended is None:
            message = f"Invalid arguments for tool '{tool.tool_definition.name}': {exc}"
            raise ToolExecutionError(tool.tool_definition, exc, message) from exc
        raw = extended
    return tool._validate(raw, text, one_step_errors(tool, text))


def one_step_errors(tool: MethodToolCallback, text: str) -> list[Any]:
    """The errors of the one-step validation ``_values`` runs (``[]``: none, or no one-step validator)."""
    adapter = tool._schema.checked_arguments or tool._schema.arguments
    if adapter is None:
        return []
    try:
        adapter.validate_json(text)
    except pydantic.ValidationError as exc:
        return exc.errors(include_url=False, include_context=False, include_input=False)  # type: ignore[return-value]
    return []
