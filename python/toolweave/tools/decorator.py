"""The ``@tool`` decorator: marks a function or method as a tool (Spring AI ``@Tool``).

The decorated function is returned unchanged apart from a ``__toolweave_tool__`` attribute, so it
stays callable as plain Python; ``MethodToolCallback.from_function`` and the ``ChatClient`` read
the attribute to build the tool.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar, overload

from toolweave.tools.converter import ToolCallResultConverter
from toolweave.tools.definition import ToolMetadata, check_text

if TYPE_CHECKING:
    from toolweave.approvals import ApprovalPredicate

__all__ = ['ToolSpec', 'get_tool_spec', 'tool']

F = TypeVar('F', bound=Callable[..., Any])
TOOL_ATTRIBUTE = '__toolweave_tool__'


@dataclass(frozen=True)
class ToolSpec:
    """What ``@tool`` recorded about a function.

    Attributes:
        name: Tool name; ``None`` means the function name.
        description: Tool description; ``None`` means the docstring (or the name split into words).
        return_direct: Return the result to the caller instead of the model.
        result_converter: Turns the return value into text; ``None`` means the default converter.
        sequential: Run alone, never next to the turn's other calls (see ``ToolMetadata.sequential``).
        timeout: Seconds one call may take before the model gets an error text instead.
        max_retries: Invalid-argument answers per turn before the run fails (default 1).
        requires_approval: ``True`` or a predicate ``(call, context) -> bool``: calls wait for approval.
        deferred: The result comes from outside the process (the function is never run by the loop).
    """

    name: str | None = None
    description: str | None = None
    return_direct: bool = False
    result_converter: ToolCallResultConverter | None = None
    sequential: bool = False
    timeout: float | None = None
    max_retries: int = 1
    requires_approval: bool | ApprovalPredicate = False
    deferred: bool = False


@overload
def tool(func: F, /) -> F: ...


@overload
def tool(
    *,
    name: str | None = None,
    description: str | None = None,
    return_direct: bool = False,
    result_converter: ToolCallResultConverter | None = None,
    sequential: bool = False,
    timeout: float | None = None,
    max_retries: int = 1,
    requires_approval: bool | ApprovalPredicate = False,
    deferred: bool = False,
) -> Callable[[F], F]: ...


def tool(
    func: F | None = None,
    /,
    *,
    name: str | None = None,
    description: str | None = None,
    return_direct: bool = False,
    result_converter: ToolCallResultConverter | None = None,
    sequential: bool = False,
    timeout: float | None = None,
    max_retries: int = 1,
    requires_approval: bool | ApprovalPredicate = False,
    deferred: bool = False,
) -> F | Callable[[F], F]:
    """Mark a function, method or async function as a tool; usable bare (``@tool``) or called (``@tool(...)``).

    Args:
        func: The function, when used bare.
        name: Tool name (default: the function name).
        description: Tool description (default: the docstring, else the name split into words).
        return_direct: Hand the result straight to the caller (as Spring AI's ``returnDirect``).
        result_converter: Converts the return value to text (default ``DefaultToolCallResultConverter``).
        sequential: Never run next to other calls of the same turn (e.g. a tool that writes shared state).
        timeout: Seconds one call may take; on expiry the model gets an error text (beyond Spring).
        max_retries: Invalid-argument answers per turn before the run fails (default 1).
        requires_approval: ``True``, or a predicate of the call and its ``ToolContext``
            (``lambda call, context: ...``): a call that needs approval pauses the run until a person
            decides (see :mod:`toolweave.approvals`; as pydantic-ai's ``requires_approval``).
        deferred: The result comes from outside the process (a front-end action, a job queue, a
            person): each call pauses the run until the result is given; the function documents the
            tool's parameters and is never run by the loop.

    Returns:
        The function itself, marked.

    Raises:
        ValueError: ``timeout`` is not a positive number, ``max_retries`` is negative, or ``name`` or
            ``description`` is empty.
        TypeError: ``requires_approval`` is neither a bool nor callable, ``deferred`` is not a bool,
            ``name`` or ``description`` is not a ``str``, a parameter's type has no JSON Schema,
            or ``**kwargs`` is declared (checked at decoration time; a forward reference that does not
            resolve yet is checked later).
    """
    # validates timeout, max_retries and the approval flags at decoration time
    ToolMetadata(timeout=timeout, max_retries=max_retries, requires_approval=requires_approval, deferred=deferred)
    for argument, value in (('name', name), ('description', description)):
        if value is not None:
            check_text(argument, value)
    spec = ToolSpec(
        name,
        description,
        return_direct,
        result_converter,
        sequential,
        timeout,
        max_retries,
        requires_approval,
        deferred,
    )

    def mark(f: F) -> F:
        from toolweave.tools.schema import function_schema  # schema imports this module's users

        try:
            function_schema(f)
        except NameError:
            pass  # forward reference not defined yet: checked when the callback is built
        setattr(f, TOOL_ATTRIBUTE, spec)
        return f

    return mark(func) if func is not None else mark


def get_tool_spec(obj: object) -> ToolSpec | None:
    """The :class:`ToolSpec` of a ``@tool`` function or bound method, else ``None``."""
    target = getattr(obj, '__func__', obj)
    spec = getattr(target, TOOL_ATTRIBUTE, None)
    return spec if isinstance(spec, ToolSpec) else None
