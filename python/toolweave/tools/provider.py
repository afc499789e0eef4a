"""Where tools come from: providers (collect ``@tool`` methods) and resolvers (find a tool by name).

As Spring AI's ``MethodToolCallbackProvider``, ``ToolCallbacks.from``, ``StaticToolCallbackResolver``
and ``DelegatingToolCallbackResolver``.
"""

from __future__ import annotations

import inspect
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from toolweave.tools.callback import ToolCallback
from toolweave.tools.decorator import get_tool_spec
from toolweave.tools.method import MethodToolCallback

__all__ = [
    'DelegatingToolCallbackResolver',
    'MethodToolCallbackProvider',
    'StaticToolCallbackResolver',
    'ToolCallbackProvider',
    'ToolCallbackResolver',
    'ToolCallbacks',
    'check_unique_tool_names',
    'duplicate_tool_names',
    'to_tool_callbacks',
]

logger = logging.getLogger('toolweave.tools')


@runtime_checkable
class ToolCallbackProvider(Protocol):
    """Anything that supplies a list of tools (Spring AI ``ToolCallbackProvider``)."""

    @property
    def tool_callbacks(self) -> Sequence[ToolCallback]:
        """The tools."""
        ...


@runtime_checkable
class ToolCallbackResolver(Protocol):
    """Finds a tool by name at execution time (Spring AI ``ToolCallbackResolver``)."""

    def resolve(self, tool_name: str) -> ToolCallback | None:
        """The tool called ``tool_name``, or ``None``."""
        ...


class MethodToolCallbackProvider:
    """The ``@tool`` methods of some objects, as tools.

    Args:
        objects: Instances (or modules/classes) whose ``@tool``-marked callables become tools.

    Raises:
        TypeError: ``objects`` is not an iterable, or holds ``None``.
        ValueError: an object has no ``@tool`` method (pass a ``ToolCallback`` instead), or tools share
            a name (one error naming every duplicated name and its owners).
    """

    def __init__(self, objects: Iterable[object]) -> None:
        callbacks: list[ToolCallback] = []
        owners: list[str] = []
        for obj in _items('objects', objects):
            found = _tool_methods(obj)
            if not found:
                raise ValueError(
                    f'No @tool methods found on {type(obj).__name__} object {obj!r}; '
                    'tools are functions (decorated with @tool or not), ToolCallbacks, or objects with @tool methods; '
                    'pass a ToolCallback (e.g. MethodToolCallback(fn)) to wrap anything else'
                )
            callbacks.extend(found)
            owners.extend(type(obj).__qualname__ for _ in found)
        check_unique_tool_names(callbacks, owners)
        self._callbacks = tuple(callbacks)

    @property
    def tool_callbacks(self) -> tuple[ToolCallback, ...]:
        """The collected tools, in attribute order per object."""
        return self._callbacks


def _tool_methods(obj: object) -> list[ToolCallback]:
    callbacks: list[ToolCallback] = []
    for attr_name in dir(obj):
        if attr_name.startswith('__'):
            continue
        member = inspect.getattr_static(obj, attr_name)
        if get_tool_spec(getattr(member, '__func__', member)) is None:
            continue
        bound = getattr(obj, attr_name)
        if _returns_callable(bound):
            logger.warning("Skipping @tool '%s': tools returning a callable are not supported", attr_name)
            continue
        callbacks.append(MethodToolCallback(bound))
    return callbacks


def _returns_callable(func: Callable[..., Any]) -> bool:
    try:
        annotation = inspect.signature(func, eval_str=True).return_annotation
    except (NameError, TypeError, ValueError):
        return False
    origin = getattr(annotation, '__origin__', annotation)
    return origin is Callable or getattr(origin, '__name__', '') == 'Callable'


class ToolCallbacks:
    """One-line entry points (Spring AI ``ToolCallbacks``)."""

    @staticmethod
    def from_(*objects: object) -> tuple[ToolCallback, ...]:
        """``objects`` as tools: ``@tool`` functions, objects with ``@tool`` methods, callbacks, providers.

        Raises:
            ValueError: an object has no ``@tool`` method.
        """
        return to_tool_callbacks(*objects)


def to_tool_callbacks(*items: object) -> tuple[ToolCallback, ...]:
    """Normalise what users pass as tools into ``ToolCallback``s, in order.

    Accepts ``ToolCallback``s, ``ToolCallbackProvider``s, functions (``@tool``-marked or plain),
    objects with ``@tool`` methods, and (nested) lists or tuples of these.

    Raises:
        ValueError: an object has no ``@tool`` method.
        TypeError: an item is ``None``, an unbound method (``Class.method``), or a function whose
            parameters cannot be described by a JSON Schema.
    """
    out: list[ToolCallback] = []
    for item in items:
        if item is None:
            raise TypeError('tools cannot contain None')
        if isinstance(item, (list, tuple)):
            out.extend(to_tool_callbacks(*item))
        elif isinstance(item, ToolCallback):
            out.append(item)
        elif isinstance(item, ToolCallbackProvider):
            out.extend(item.tool_callbacks)
        elif inspect.isfunction(item) or inspect.ismethod(item) or inspect.isbuiltin(item):
            out.append(MethodToolCallback(item))
        else:
            out.extend(MethodToolCallbackProvider([item]).tool_callbacks)
    return tuple(out)


class StaticToolCallbackResolver:
    """Resolves names against a fixed list of tools.

    Raises:
        TypeError: ``callbacks`` is not an iterable of ``ToolCallback``s.
    """

    def __init__(self, callbacks: Iterable[ToolCallback]) -> None:
        self._by_name = {cb.tool_definition.name: cb for cb in _items('callbacks', callbacks, ToolCallback)}

    def resolve(self, tool_name: str) -> ToolCallback | None:
        """The tool called ``tool_name``, or ``None``."""
        return self._by_name.get(tool_name)


class DelegatingToolCallbackResolver:
    """Asks each resolver in turn; the first non-``None`` answer wins.

    Raises:
        TypeError: ``resolvers`` is not an iterable of ``ToolCallbackResolver``s.
    """

    def __init__(self, resolvers: Iterable[ToolCallbackResolver]) -> None:
        self._resolvers = tuple(_items('resolvers', resolvers, ToolCallbackResolver))

    def resolve(self, tool_name: str) -> ToolCallback | None:
        """The first resolver's tool called ``tool_name``, or ``None``."""
        return next((cb for r in self._resolvers if (cb := r.resolve(tool_name)) is not None), None)


def duplicate_tool_names(callbacks: Iterable[ToolCallback]) -> list[str]:
    """The names more than one of ``callbacks`` has, in order of first use (Spring ``ToolUtils.getDuplicateToolNames``).

    >>> from toolweave.tools import FunctionToolCallback
    >>> tools = [FunctionToolCallback.builder(n, lambda: 'x').build() for n in ('a', 'b', 'a', 'b', 'c')]
    >>> duplicate_tool_names(tools)
    ['a', 'b']
    """
    counts = Counter(cb.tool_definition.name for cb in _items('callbacks', callbacks))
    return [name for name, count in counts.items() if count > 1]


def check_unique_tool_names(callbacks: Sequence[ToolCallback], owners: Sequence[str] | None = None) -> None:
    """Raise one ``ValueError`` naming every duplicated tool name (a second tool of a name could never be called).

    Args:
        callbacks: The tools.
        owners: How to name each tool in the message (default: its ``repr``), one per callback.

    Raises:
        TypeError: ``callbacks`` is not a sequence, or holds ``None``.
        ValueError: ``Multiple tools with the same name 'a': <owner> and <owner>; 'b': ...``.
    """
    callbacks = _items('callbacks', callbacks)
    if len({cb.tool_definition.name for cb in callbacks}) == len(callbacks):  # the common case, without a Counter
        return
    duplicates = duplicate_tool_names(callbacks)
    if not duplicates:
        return
    labels = list(owners) if owners is not None else [repr(cb) for cb in callbacks]
    parts = []
    for name in duplicates:
        holders = [label for cb, label in zip(callbacks, labels, strict=True) if cb.tool_definition.name == name]
        parts.append(f"'{name}': {' and '.join(holders)}")
    raise ValueError('Multiple tools with the same name ' + '; '.join(parts))


def _items(argument: str, values: Iterable[Any], kind: type[Any] | None = None) -> list[Any]:
    """``values`` as a list; ``TypeError`` naming ``argument`` if not iterable or holding ``None`` or a non-``kind``."""
    if values is None or isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise TypeError(f'{argument} must be an iterable, not {type(values).__name__}')
    items = list(values)
    for item in items:
        if item is None:
            raise TypeError(f'{argument} cannot contain None')
        if kind is not None and not isinstance(item, kind):
            raise TypeError(f'{argument} must hold {kind.__name__} objects, got {type(item).__name__}')
    return items
