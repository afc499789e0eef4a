"""Augmented tools: extra arguments the model must fill in on every call (Spring AI ``AugmentedToolCallbackProvider``).

The classic use is an ``inner_thought``: every wrapped tool's input schema gains the fields of an
``argument_type`` (a pydantic model or a dataclass), so the model says *why* it calls the tool, in a
structured field, each time. Before the tool runs, those fields are taken out of the arguments,
validated into ``argument_type`` and handed to ``consumer(event)`` with the tool definition and the
call id; the tool itself receives only its own arguments. A consumer that raises blocks the call:
the tool never runs and the exception text goes back to the model as the tool's response (through
the manager's exception processor, so ``always_throw``/``rethrow`` apply). Typical consumers log or
audit the reasoning, or refuse dangerous intents.

Required fields follow the usual rules (``ToolParam(required=)`` > admits ``None`` > has a default >
required); ``additionalProperties: false`` stays. Works with any ``ToolCallback`` (``MethodToolCallback``,
``FunctionToolCallback``, sync or async), and alongside tool search.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import inspect
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, get_origin

import orjson
import pydantic

from toolweave._native import forbid_additional_properties, hoist_defs_to_root, parse_arguments
from toolweave.exceptions import InvalidToolArgumentsError, ToolArgumentsError, ToolExecutionError
from toolweave.tools.callback import ToolCallback
from toolweave.tools.context import ToolContext, current_tool_call
from toolweave.tools.definition import ToolDefinition, ToolMetadata
from toolweave.tools.param import ToolParam
from toolweave.tools.schema import _ToolJsonSchema, clean_generated_schema, is_required

__all__ = ['AgentThinking', 'AugmentedArgumentEvent', 'AugmentedToolCallback', 'AugmentedToolCallbackProvider']

T = TypeVar('T')


class AgentThinking(pydantic.BaseModel):
    """The usual augmentation: the model's reasoning for the call."""

    inner_thought: str = pydantic.Field(
        description='Your reasoning for calling this tool: why it is needed and what result you expect.'
    )


@dataclass(frozen=True)
class AugmentedArgumentEvent(Generic[T]):
    """What the consumer receives before each call (Spring ``AugmentedArgumentEvent``).

    Attributes:
        tool_definition: The augmented definition, as the model saw it.
        arguments: The extra fields, validated into ``argument_type``.
        raw_input: The whole argument JSON text the model sent.
        tool_call_id: The id of the model's tool call (``None`` when called outside the manager).
    """

    tool_definition: ToolDefinition
    arguments: T
    raw_input: str
    tool_call_id: str | None


Consumer = Callable[[AugmentedArgumentEvent[Any]], Any]


class _Augmentation:
    """The parts of ``argument_type`` shared by every wrapped tool: property schemas, required names, validator."""

    def __init__(self, argument_type: type[Any]) -> None:
        if not (
            inspect.isclass(argument_type)
            and (issubclass(argument_type, pydantic.BaseModel) or dataclasses.is_dataclass(argument_type))
        ):
            raise TypeError(f'argument_type must be a pydantic model or a dataclass, got {argument_type!r}')
        self.argument_type = argument_type
        self.adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(argument_type)
        schema = self.adapter.json_schema(ref_template='#/$defs/{model}', schema_generator=_ToolJsonSchema)
        # the generator's finishing, as for a tool's own schema (no titles, closed nested objects)
        schema = forbid_additional_properties(clean_generated_schema(schema))
        self.defs: dict[str, Any] = schema.get('$defs', {})
        fields = _fields(argument_type)
        self.properties: dict[str, Any] = {}
        self.required: list[str] = []
        for name, (annotation, has_default) in fields.items():
            prop = dict(schema.get('properties', {}).get(name, {}))
            param = _tool_param(annotation)
            if param is not None and param.description:
                prop['description'] = param.description
            self.properties[name] = prop
            if is_required(param, annotation, None if has_default else inspect.Parameter.empty):
                self.required.append(name)
        if not self.properties:
            raise ValueError(f'argument_type {argument_type.__name__} has no fields')

    def schema_for(self, tool: ToolDefinition) -> dict[str, Any]:
        """``tool``'s input schema with the fields added.

        The fields' ``$defs`` join the tool's: one of the same name and content is shared, a different
        one is renamed (``Name_2``) with the fields' references rewritten (``hoist_defs_to_root``).

        Raises:
            ValueError: a field clashes with one of the tool's arguments.
        """
        schema = copy.deepcopy(dict(tool.input_schema))
        properties = dict(schema.get('properties') or {})
        clash = sorted(set(properties) & set(self.properties))
        if clash:
            raise ValueError(f"tool '{tool.name}' already has argument(s) {clash}; argument_type fields must be new")
        extra, defs = hoist_defs_to_root({'properties': self.properties, '$defs': self.defs}, schema.get('$defs') or {})
        properties.update(extra['properties'])
        schema['type'] = 'object'
        schema['properties'] = properties
        schema['required'] = [*schema.get('required', []), *self.required]
        if defs:
            schema['$defs'] = defs
        return schema


class AugmentedToolCallback:
    """One tool with the extra fields; see the module docstring.

    Args:
        delegate: The tool to wrap.
        argument_type: A pydantic model or a dataclass with the extra fields.
        consumer: Called with an :class:`AugmentedArgumentEvent` before each call (may be ``async``).
        remove_extra_arguments: Strip the extra fields before calling ``delegate`` (default ``True``).

    Raises:
        TypeError: ``delegate`` is not a ``ToolCallback``, ``argument_type`` is not a pydantic model or
            dataclass, or ``consumer`` not callable.
        ValueError: a field clashes with one of the tool's arguments.
    """

    def __init__(
        self,
        delegate: ToolCallback,
        argument_type: type[Any] = AgentThinking,
        consumer: Consumer | None = None,
        *,
        remove_extra_arguments: bool = True,
        _augmentation: _Augmentation | None = None,
    ) -> None:
        if not isinstance(delegate, ToolCallback):
            raise TypeError(f'delegate must be a ToolCallback, not {type(delegate).__name__}')
        if consumer is not None and not callable(consumer):
            raise TypeError(f'consumer must be callable, got {consumer!r}')
        self._delegate = delegate
        self._augmentation = _augmentation or _Augmentation(argument_type)
        self._consumer = consumer
        self.remove_extra_arguments = remove_extra_arguments
        original = delegate.tool_definition
        self._definition = ToolDefinition(original.name, original.description, self._augmentation.schema_for(original))

    @property
    def tool_definition(self) -> ToolDefinition:
        """The delegate's definition with the extra fields in its input schema."""
        return self._definition

    @property
    def tool_metadata(self) -> ToolMetadata:
        """The delegate's metadata."""
        return self._delegate.tool_metadata

    @property
    def delegate(self) -> ToolCallback:
        """The wrapped tool."""
        return self._delegate

    @property
    def function(self) -> Callable[..., Any] | None:
        """The delegate's function, if any (so the manager schedules it as it would the delegate)."""
        return getattr(self._delegate, 'function', None)

    def __repr__(self) -> str:
        return f'AugmentedToolCallback({self._delegate!r}, {self._augmentation.argument_type.__name__})'

    def call(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        """Split, validate, tell the consumer, then run the delegate on its own arguments.

        Raises:
            ToolExecutionError: the extra fields are invalid or missing, or the consumer raised
                (the delegate does not run); or the delegate failed.
        """
        event, forwarded = self._prepare(tool_input)
        if event is not None and self._consumer is not None:
            try:
                outcome = self._consumer(event)
                if inspect.isawaitable(outcome):
                    _run_awaitable(outcome)
            except ToolExecutionError:
                raise  # the consumer's own: not wrapped a second time
            except Exception as error:
                raise ToolExecutionError(self._definition, error) from error
        return self._delegate.call(forwarded, tool_context)

    async def acall(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        """Async :meth:`call` (an async consumer is awaited on the running loop)."""
        event, forwarded = self._prepare(tool_input)
        if event is not None and self._consumer is not None:
            try:
                outcome = self._consumer(event)
                if inspect.isawaitable(outcome):
                    await outcome
            except ToolExecutionError:
                raise
            except Exception as error:
                raise ToolExecutionError(self._definition, error) from error
        return await self._delegate.acall(forwarded, tool_context)

    def _prepare(self, tool_input: str) -> tuple[AugmentedArgumentEvent[Any] | None, str]:
        """The consumer's event and the input for the delegate; unparsable input goes to the delegate as is."""
        if not isinstance(tool_input, str) or not tool_input.strip():
            return None, tool_input  # the delegate raises its own clear error
        try:
            raw = parse_arguments(tool_input)
        except ToolArgumentsError:
            return None, tool_input
        if not isinstance(raw, dict):
            return None, tool_input
        names = self._augmentation.properties
        extra = {k: v for k, v in raw.items() if k in names}
        try:
            arguments = self._augmentation.adapter.validate_python(extra)
        except pydantic.ValidationError as error:
            problems = [f'{".".join(str(p) for p in e["loc"])}: {e["msg"]}' for e in error.errors(include_url=False)]
            cause = InvalidToolArgumentsError(self._definition.name, problems)
            raise ToolExecutionError(self._definition, cause, cause.message) from error
        call = current_tool_call()
        event = AugmentedArgumentEvent(self._definition, arguments, tool_input, call.id if call else None)
        if not self.remove_extra_arguments:
            return event, tool_input
        own = {k: v for k, v in raw.items() if k not in names}
        return event, orjson.dumps(own).decode()


class AugmentedToolCallbackProvider:
    """Wraps tools so each gains the fields of ``argument_type`` (Spring ``AugmentedToolCallbackProvider``).

    >>> from toolweave.tools import tool
    >>> @tool
    ... def add(a: int, b: int) -> int:
    ...     return a + b
    >>> thoughts = []
    >>> provider = AugmentedToolCallbackProvider([add], consumer=lambda e: thoughts.append(e.arguments.inner_thought))
    >>> (augmented,) = provider.tool_callbacks
    >>> augmented.tool_definition.input_schema['required']
    ['a', 'b', 'inner_thought']
    >>> augmented.call('{"a": 1, "b": 2, "inner_thought": "the user wants a sum"}')
    '3'
    >>> thoughts
    ['the user wants a sum']

    Args:
        tools: What ``ChatClient.tools()`` accepts: ``ToolCallback``s, providers, ``@tool`` functions,
            objects with ``@tool`` methods, lists of these.
        argument_type: A pydantic model or a dataclass (default :class:`AgentThinking`).
        consumer: Called before each call with an :class:`AugmentedArgumentEvent` (sync or async);
            raising blocks the call.
        remove_extra_arguments: Strip the extra fields before calling the tool (default ``True``).

    Raises:
        TypeError: ``tools`` is ``None``, or bad ``argument_type`` or ``consumer``.
        ValueError: a field clashes with a tool argument.
    """

    def __init__(
        self,
        tools: Iterable[object] | object,
        argument_type: type[Any] = AgentThinking,
        consumer: Consumer | None = None,
        *,
        remove_extra_arguments: bool = True,
    ) -> None:
        from toolweave.tools.provider import to_tool_callbacks  # the provider module imports many tools

        if tools is None:
            raise TypeError('tools cannot be None (give the tools to augment)')
        items = list(tools) if isinstance(tools, (list, tuple)) else [tools]
        augmentation = _Augmentation(argument_type)
        self._callbacks = tuple(
            AugmentedToolCallback(
                cb, argument_type, consumer, remove_extra_arguments=remove_extra_arguments, _augmentation=augmentation
            )
            for cb in to_tool_callbacks(*items)
        )

    @property
    def tool_callbacks(self) -> tuple[AugmentedToolCallback, ...]:
        """The wrapped tools, in the order given."""
        return self._callbacks


def _fields(argument_type: type[Any]) -> dict[str, tuple[Any, bool]]:
    """Field name -> (annotation with extras, has a default)."""
    if issubclass(argument_type, pydantic.BaseModel):
        out: dict[str, tuple[Any, bool]] = {}
        for name, info in argument_type.model_fields.items():
            annotation: Any = info.annotation
            tool_params = [m for m in info.metadata if isinstance(m, ToolParam)]
            if tool_params:
                annotation = typing.Annotated[annotation, tool_params[0]]
            out[info.alias or name] = (annotation, not info.is_required())
        return out
    hints = typing.get_type_hints(argument_type, include_extras=True)
    return {
        f.name: (
            hints.get(f.name, Any),
            f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING,
        )
        for f in dataclasses.fields(argument_type)
    }


def _tool_param(annotation: Any) -> ToolParam | None:
    if get_origin(annotation) is typing.Annotated:
        return next((m for m in annotation.__metadata__ if isinstance(m, ToolParam)), None)
    return None


def _run_awaitable(awaitable: Any) -> None:
    """Run an async consumer's awaitable to completion from sync code."""

    async def wrapper() -> None:
        await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        asyncio.run(wrapper())
        return
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(asyncio.run, wrapper()).result()
