"""Structured output: a Python type -> the JSON Schema the model must answer in -> a validated value.

As Spring AI's ``call().entity(Type)`` (``BeanOutputConverter``) and pydantic-ai's output types: any type
pydantic's ``TypeAdapter`` takes works (pydantic models, dataclasses, ``TypedDict``, ``list[T]``, enums,
primitives). A type whose schema is not an object with properties (a list, an enum, a primitive, a dict)
is wrapped as ``{"result": <schema>}`` so every strategy has an object at the root (OpenAI strict mode,
output tools and the partial parser need one), and unwrapped after validation.

Three strategies (:data:`Strategy`), chosen per provider by :func:`default_strategy` and overridable:

- ``'native'``: the provider's JSON-schema output (:class:`~toolweave.chat.options.OutputSchema`: OpenAI
  ``response_format`` in the ``openai-strict`` dialect, Responses ``text.format``, Gemini ``responseSchema``
  in the ``gemini`` dialect, Ollama ``format``, llama.cpp ``response_format``);
- ``'tool'``: an output tool (``final_result``, as pydantic-ai's ``ToolOutput``) the model must call; it ends
  the run with its arguments as the answer (``return_direct``). Works with every tool-calling model;
- ``'prompted'``: Spring's format instructions appended to the last user message, the answer parsed leniently
  (code fences, prose, single quotes... see ``parse_arguments(text, 'lenient')``).

The validation retry loop is :class:`~toolweave.advisors.structured_output.StructuredOutputAdvisor`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Generic, Literal, TypeVar

import orjson
import pydantic

from toolweave.chat.messages import UserMessage
from toolweave.chat.options import OutputSchema, ToolCallingChatOptions
from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse, Usage
from toolweave.core import parse_arguments
from toolweave.exceptions import ToolArgumentsError
from toolweave.tools.context import ToolContext
from toolweave.tools.definition import ToolDefinition, ToolMetadata

__all__ = [
    'OUTPUT_TOOL_NAME',
    'OutputType',
    'OutputValidationError',
    'ResponseEntity',
    'Strategy',
    'StructuredOutputError',
    'StructuredOutputValidationError',
    'default_strategy',
]

T = TypeVar('T')

Strategy = Literal['native', 'tool', 'prompted']
"""How the model is asked for the structured answer (see the module docstring)."""

OUTPUT_TOOL_NAME = 'final_result'
"""The output tool's name (pydantic-ai's default name)."""

_NATIVE_PROVIDERS = frozenset({'openai', 'gemini', 'ollama', 'local'})
_TOOL_PROVIDERS = frozenset({'anthropic'})
_FENCE = re.compile(r'```(?:json)?\s*')

FORMAT_INSTRUCTIONS = (
    'Your response should be in JSON format.\n'
    'Do not include any explanations, only provide a RFC8259 compliant JSON response following this format '
    'without deviation.\n'
    'Do not include markdown code blocks in your response.\n'
    'Here is the JSON Schema instance your output must adhere to:\n'
    '```{schema}```'
)
"""Spring AI ``BeanOutputConverter.getFormat()``'s text; ``{schema}`` is the JSON Schema."""


class StructuredOutputError(Exception):
    """Base of the structured-output errors."""


class OutputValidationError(StructuredOutputError):
    """One answer did not validate (the retry advisor sends :attr:`errors` back to the model).

    Attributes:
        errors: One line per problem (``'name: Field required'``, ``'not JSON: ...'``).
    """

    def __init__(self, errors: list[str]) -> None:
        self.errors = errors
        super().__init__('; '.join(errors))


class StructuredOutputValidationError(StructuredOutputError):
    """Every attempt's answer failed validation: the retry budget is spent.

    Attributes:
        raw: The last answer's raw text (or the output tool's argument text).
        errors: The last answer's validation errors, one line each.
        attempts: How many answers were validated (``1 + max_retries``).
        usage: The token usage summed over every attempt of the round that failed (``None`` if none reported).
    """

    def __init__(self, raw: str, errors: list[str], attempts: int, usage: Usage | None) -> None:
        self.raw = raw
        self.errors = errors
        self.attempts = attempts
        self.usage = usage
        lines = '\n'.join(f'- {e}' for e in errors)
        super().__init__(f'structured output invalid after {attempts} attempt(s):\n{lines}\nlast answer: {raw!r:.500}')


@dataclass(frozen=True)
class ResponseEntity(Generic[T]):
    """A structured run's value and its final response (Spring AI ``ResponseEntity``).

    Attributes:
        entity: The validated value.
        chat_response: The run's last response; its ``usage`` sums every round and every attempt.
    """

    entity: T
    chat_response: ChatResponse | None


def _schema_name(tp: Any) -> str:
    name = getattr(tp, '__name__', None) or type(tp).__name__
    return re.sub(r'[^a-zA-Z0-9_-]', '_', str(name))[:64] or 'output'


def _root_schema(adapter: pydantic.TypeAdapter[Any]) -> tuple[dict[str, Any], bool]:
    """``(schema, wrapped)``: the type's JSON Schema, wrapped as ``{"result": ...}`` unless it is an object."""
    schema = adapter.json_schema()
    if schema.get('type') == 'object' and schema.get('properties'):
        return schema, False
    inner = {k: v for k, v in schema.items() if k != '$defs'}
    wrapper: dict[str, Any] = {'type': 'object', 'properties': {'result': inner}, 'required': ['result']}
    if '$defs' in schema:
        wrapper['$defs'] = schema['$defs']
    return wrapper, True


MAX_ERRORS = 20
"""Validation errors kept per answer (the rest counted in one last line): they go back to the model."""
MAX_ERROR_LINE = 300
"""Characters kept of one error line (a location may hold a key the model wrote, of any length)."""


def _not_json(error: ToolArgumentsError) -> str:
    """``'not JSON at line L column C: <reason> near <excerpt>'``: the parser's reason, without its tool-arguments wording."""
    reason = error.message.partition('): ')[2] or error.message
    return f'not JSON at line {error.line} column {error.column}: {reason}'


def _errors(exc: pydantic.ValidationError) -> list[str]:
    """One line per error, at most :data:`MAX_ERRORS` lines of at most :data:`MAX_ERROR_LINE` characters each.

    A hostile or broken answer (100,000 wrong list items, a megabyte-long key) would otherwise make megabytes of
    feedback for the retry and of exception text.
    """
    found = exc.errors(include_url=False, include_input=False)
    lines = [_cut(f'{".".join(str(p) for p in e["loc"]) or "(root)"}: {e["msg"]}') for e in found[:MAX_ERRORS]]
    if len(found) > MAX_ERRORS:
        lines.append(f'... and {len(found) - MAX_ERRORS} more errors')
    return lines


def _cut(line: str) -> str:
    return line if len(line) <= MAX_ERROR_LINE else f'{line[:MAX_ERROR_LINE]}... ({len(line) - MAX_ERROR_LINE} more)'


def _strip(text: str) -> str:
    """The JSON part of an answer: from the first ``{`` or ``[`` on, code fences removed."""
    text = _FENCE.sub('', text)
    starts = [i for i in (text.find('{'), text.find('[')) if i >= 0]
    return text[min(starts) :] if starts else text


@dataclass(frozen=True)
class OutputType(Generic[T]):
    """A Python type as a structured-output target: its adapter, root schema and wrapping.

    Build with :meth:`of`. Instances are immutable and may be shared between runs.

    Attributes:
        type: The requested type.
        name: A schema name from the type (``[a-zA-Z0-9_-]``, for OpenAI's ``json_schema.name``).
        schema: The JSON Schema sent to the model (an object at the root).
        wrapped: The type's value travels as ``{"result": value}``.
    """

    type: Any
    name: str
    schema: Mapping[str, Any]
    wrapped: bool
    _adapter: pydantic.TypeAdapter[T] = field(repr=False, compare=False)

    @classmethod
    def of(cls, tp: type[T] | Any) -> OutputType[T]:
        """The output type of ``tp``.

        Raises:
            TypeError: pydantic cannot make a JSON Schema of ``tp``.
        """
        try:
            adapter: pydantic.TypeAdapter[T] = pydantic.TypeAdapter(tp)
            schema, wrapped = _root_schema(adapter)
        except (pydantic.PydanticUserError, pydantic.errors.PydanticInvalidForJsonSchema) as exc:
            raise TypeError(f'cannot use {tp!r} as a structured output type: {exc}') from exc
        return cls(tp, _schema_name(tp), schema, wrapped, adapter)

    def output_schema(self, *, strict: bool = True) -> OutputSchema:
        """The native-output request of this type."""
        return OutputSchema(self.name, self.schema, strict)

    def instructions(self) -> str:
        """Spring's format instructions for the prompted strategy, with this type's schema."""
        return FORMAT_INSTRUCTIONS.replace('{schema}', orjson.dumps(self.schema).decode())

    def _unwrap(self, value: Any) -> Any:
        if self.wrapped and isinstance(value, dict) and set(value) == {'result'}:
            return value['result']
        return value

    def validate(self, text: str) -> T:
        """The value of a whole answer (JSON text, leniently parsed).

        Raises:
            OutputValidationError: not JSON, or not a valid value of the type.
        """
        try:
            value: Any = parse_arguments(text, 'lenient')
        except ToolArgumentsError as exc:
            try:
                value = orjson.loads(_strip(text))  # a bare list or scalar (lenient mode reads objects only)
            except orjson.JSONDecodeError:
                raise OutputValidationError([_not_json(exc)]) from exc
        try:
            return self._adapter.validate_python(self._unwrap(value))
        except pydantic.ValidationError as exc:
            raise OutputValidationError(_errors(exc)) from exc

    def partial(self, text: str) -> T | None:
        """The value of an answer's prefix, or ``None`` while it does not validate yet.

        The prefix is parsed with the core's partial parser (``parse_arguments(text, 'partial')``) and
        validated with pydantic's ``experimental_allow_partial`` (an unfinished last list item or string is
        dropped/kept as pydantic decides); a required field that has not arrived yet gives ``None``.
        """
        body = _strip(text)
        if not body.startswith('{'):
            return None
        try:
            value = parse_arguments(body, 'partial')
        except ToolArgumentsError:
            return None
        if self.wrapped and 'result' not in value:
            return None
        try:
            return self._adapter.validate_python(self._unwrap(value), experimental_allow_partial=True)
        except pydantic.ValidationError:
            return None


def default_strategy(model: Any) -> Strategy:
    """The strategy for ``model``: its ``structured_output_strategy`` attribute when it has one, else by provider.

    ``'native'`` for OpenAI (Chat Completions and Responses), Gemini, Ollama and the local llama.cpp model;
    ``'tool'`` for Anthropic (no JSON-schema output in the Messages API); ``'prompted'`` for anything else
    (a model of unknown abilities, a scripted model).
    """
    declared = getattr(model, 'structured_output_strategy', None)
    if declared in ('native', 'tool', 'prompted'):
        return declared  # type: ignore[no-any-return]
    provider = getattr(model, 'provider', None)
    if provider is None and type(model).__name__ == 'LocalChatModel':
        provider = 'local'
    if provider in _NATIVE_PROVIDERS:
        return 'native'
    return 'tool' if provider in _TOOL_PROVIDERS else 'prompted'


class OutputTool:
    """The output tool (``final_result``): its arguments are the answer; it ends the run (``return_direct``).

    A :class:`~toolweave.tools.callback.ToolCallback` whose ``call`` returns the argument text unchanged;
    validation is the retry advisor's.
    """

    def __init__(self, output: OutputType[Any]) -> None:
        description = f'Give the final answer ({output.name}). Call this once you have everything; it ends the task.'
        self._definition = ToolDefinition(OUTPUT_TOOL_NAME, description, dict(output.schema))
        self._metadata = ToolMetadata(return_direct=True)

    @property
    def tool_definition(self) -> ToolDefinition:
        """``final_result`` with the output type's schema."""
        return self._definition

    @property
    def tool_metadata(self) -> ToolMetadata:
        """``return_direct=True``."""
        return self._metadata

    def call(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        """The arguments, as the answer text."""
        return tool_input

    async def acall(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        """The arguments, as the answer text."""
        return tool_input


def with_output_tool(prompt: Prompt, output: OutputType[Any]) -> Prompt:
    """``prompt`` with the output tool added and a tool call required (as pydantic-ai without text output)."""
    options = prompt.options
    if not isinstance(options, ToolCallingChatOptions):
        values = {f.name: getattr(options, f.name) for f in fields(options)} if options is not None else {}
        options = ToolCallingChatOptions(**values)
    callbacks = tuple(c for c in options.tool_callbacks if c.tool_definition.name != OUTPUT_TOOL_NAME)
    return replace(
        prompt, options=replace(options, tool_callbacks=(*callbacks, OutputTool(output)), tool_choice='required')
    )


def with_instructions(prompt: Prompt, output: OutputType[Any]) -> Prompt:
    """``prompt`` with Spring's format instructions appended to its last user message (a new one if none)."""
    messages = list(prompt.messages)
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if isinstance(message, UserMessage):
            messages[index] = replace(message, text=f'{message.text}\n\n{output.instructions()}')
            return replace(prompt, messages=tuple(messages))
    return replace(prompt, messages=(*messages, UserMessage(output.instructions())))


def with_native_output(prompt: Prompt, output: OutputType[Any]) -> Prompt:
    """``prompt`` whose options ask for ``output``'s schema natively (:class:`OutputSchema`)."""
    options = prompt.options or ToolCallingChatOptions()
    return replace(prompt, options=replace(options, output_schema=output.output_schema()))


def prepare(prompt: Prompt, output: OutputType[Any], strategy: Strategy) -> Prompt:
    """``prompt`` asking for ``output`` the ``strategy``'s way (native schema, output tool, or instructions).

    Raises:
        ValueError: an unknown strategy.
    """
    if strategy == 'native':
        return with_native_output(prompt, output)
    if strategy == 'tool':
        return with_output_tool(prompt, output)
    if strategy == 'prompted':
        return with_instructions(prompt, output)
    raise ValueError(f"strategy must be 'native', 'tool' or 'prompted', not {strategy!r}")
