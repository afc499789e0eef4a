"""``FunctionToolCallback``: a callable taking the whole argument object as one value (Spring AI ``FunctionToolCallback``).

Spring builds these from ``java.util.function`` types; the Python forms are:

* function: ``fn(args: T) -> R`` with ``T`` a pydantic model, dataclass or TypedDict
  (``.input_type(T)``, or inferred from the first parameter's annotation); the argument text is
  decoded and validated into one ``T`` in a single pydantic ``validate_json`` step;
* raw schema: ``.input_schema(dict)``; arguments are checked by the Rust ``SchemaValidator`` and
  passed as a ``dict``;
* supplier: ``fn() -> R`` (no input; the argument text is ignored);
* consumer: ``fn(args: T) -> None`` (the model reads ``Done``);
* deferred: ``None`` instead of a callable (give ``.input_type(T)`` or ``.input_schema(dict)``): the
  result comes from outside the process, so every call pauses the run (see :mod:`toolweave.approvals`).

A second parameter annotated ``ToolContext`` receives the tool context. Async callables work as
in :class:`~toolweave.tools.MethodToolCallback`.

>>> from pydantic import BaseModel
>>> class Query(BaseModel):
...     city: str
>>> cb = FunctionToolCallback.builder('weather', lambda q: f'sunny in {q.city}').input_type(Query).build()
>>> cb.call('{"city": "Paris"}')
'sunny in Paris'
"""

from __future__ import annotations

import asyncio
import copy
import functools
import inspect
import sys
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import pydantic
import pydantic_core

from toolweave._native import SchemaValidator, forbid_additional_properties, parse_arguments
from toolweave.exceptions import SchemaValidationError, ToolArgumentsError, ToolExecutionError
from toolweave.tools._numbers import (
    BOUND_ERRORS,
    NOT_FINITE,
    OUT_OF_RANGE,
    Failure,
    Location,
    bounded_integers,
    checked_validator,
    dotted,
    extended_arguments,
    number_message,
    number_problems,
    schema_problems,
    written_failures,
)
from toolweave.tools.context import ToolContext
from toolweave.tools.converter import DefaultToolCallResultConverter, ToolCallResultConverter
from toolweave.tools.definition import ToolDefinition, ToolMetadata, check_text
from toolweave.tools.method import (
    _run_coroutine,
    check_not_unbound_method,
    check_tool_name,
    convert_result,
    fill_missing_nullable,
    invalid_arguments,
    syntax_error,
    validate_json,
)
from toolweave.tools.schema import (
    SCHEMA_DIALECT,
    _is_async,
    _ToolJsonSchema,
    clean_generated_schema,
    ensure_valid_input_schema,
    name_to_description,
)

if TYPE_CHECKING:
    from toolweave.approvals import ApprovalPredicate

__all__ = ['FunctionToolCallback', 'FunctionToolCallbackBuilder']

_EMPTY_SCHEMA: dict[str, Any] = {
    '$schema': SCHEMA_DIALECT,
    'type': 'object',
    'properties': {},
    'required': [],
    'additionalProperties': False,
}


class FunctionToolCallback:
    """A tool over a callable whose single argument is the whole argument object.

    Build it with :meth:`builder`; see the module docstring for the supported forms.
    """

    def __init__(
        self,
        definition: ToolDefinition,
        metadata: ToolMetadata,
        func: Callable[..., Any] | None,
        decode: Callable[[str], Any] | None,
        pass_context: bool,
        converter: ToolCallResultConverter,
        schema: _SchemaArguments | None = None,
    ) -> None:
        self._definition = definition
        self._metadata = metadata
        self._func = func
        self._decode = decode
        # A raw schema: the core's check_json called straight from _arguments (no decoder frame per call; the
        # failures of invalid arguments come back as a list, no exception built for them).
        self._validate = None if schema is None else schema.validator.check_json
        self._recover = None if schema is None else schema.recover
        self._pass_context = pass_context
        self._converter = converter
        self._str_as_is = type(converter) is DefaultToolCallResultConverter  # a str result is the text
        self._is_async = func is not None and _is_async(func)
        self._target = func if func is not None else self._deferred

    @staticmethod
    def builder(name: str, func: Callable[..., Any] | None) -> FunctionToolCallbackBuilder:
        """Start building a tool called ``name`` over ``func`` (``None``: a deferred tool)."""
        return FunctionToolCallbackBuilder(name, func)

    @property
    def tool_definition(self) -> ToolDefinition:
        """Name, description and input schema."""
        return self._definition

    @property
    def takes_tool_context(self) -> bool:
        """Whether :meth:`call` reads its ``tool_context``: the function takes a ``ToolContext``.

        The tool-calling manager builds a ``ToolContext`` only for the calls of tools that read one. A
        subclass that overrides ``call`` or ``acall`` is taken to read it.
        """
        overridden = (
            type(self).call is not FunctionToolCallback.call or type(self).acall is not FunctionToolCallback.acall
        )
        return overridden or self._pass_context

    @property
    def tool_metadata(self) -> ToolMetadata:
        """``return_direct`` and ``max_retries``."""
        return self._metadata

    @property
    def function(self) -> Callable[..., Any] | None:
        """The wrapped callable (the manager runs a sync one on its tool worker threads); ``None`` when deferred."""
        return self._func

    def __repr__(self) -> str:
        return f'FunctionToolCallback(name={self._definition.name!r})'

    def call(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        """Decode and validate the arguments, run the callable, convert the result.

        Raises:
            ValueError: ``tool_input`` is empty.
            ToolExecutionError: invalid arguments (cause ``InvalidToolArgumentsError`` or
                ``ToolArgumentsError``) or the callable raised.
        """
        args = self._arguments(tool_input, tool_context)
        try:
            result = _run_coroutine(self._target(*args)) if self._is_async else self._target(*args)
        except ToolExecutionError:
            raise  # the callable's own: not wrapped a second time (as Spring)
        except Exception as exc:
            raise ToolExecutionError(self._definition, exc) from exc
        if self._str_as_is and isinstance(result, str):
            return result  # convert_result's own answer, without its frame
        return convert_result(self._definition, self._converter, result)

    async def acall(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        """Async :meth:`call`: async callables run on the loop, sync ones in a worker thread."""
        args = self._arguments(tool_input, tool_context)
        try:
            result = await self._target(*args) if self._is_async else await asyncio.to_thread(self._target, *args)
        except ToolExecutionError:
            raise
        except Exception as exc:
            raise ToolExecutionError(self._definition, exc) from exc
        return convert_result(self._definition, self._converter, result)

    def _deferred(self, *args: Any) -> Any:
        """The target of a deferred tool (no function: its result comes from outside the process).

        Raises:
            ToolExecutionError: always.
        """
        problem = RuntimeError(f"tool '{self._definition.name}' is deferred: its result comes from outside the run")
        raise ToolExecutionError(self._definition, problem)

    def _arguments(self, tool_input: str, tool_context: ToolContext | None) -> tuple[Any, ...]:
        """The callable's arguments: the decoded argument object (if it takes one), then the context (if it takes one).

        Raises:
            TypeError: ``tool_input`` is not a ``str``.
            ValueError: ``tool_input`` is empty or blank (only whitespace, as ``str.strip`` reads it).
            ToolExecutionError: invalid arguments, or a validator of the tool's own input type raised.
        """
        if not isinstance(tool_input, str):
            raise TypeError(f'tool_input must be the argument JSON text (str), not {type(tool_input).__name__}')
        if not tool_input or tool_input.isspace():  # what `not tool_input.strip()` says, without copying the text
            raise ValueError('tool_input cannot be null or empty')
        validate, decode = self._validate, self._decode
        failure: ValueError | list[Failure] | None = None
        try:
            if validate is not None:  # a raw schema: valid arguments, or the schema's failures, in one core call
                checked = validate(tool_input, int64=True)
                if type(checked) is list:
                    failure = checked
                args: tuple[Any, ...] = (checked,)
            else:
                args = () if decode is None else (decode(tool_input),)
        except ToolExecutionError:
            raise  # invalid arguments, already described by the decoder
        except ToolArgumentsError as exc:
            raise syntax_error(self._definition, exc) from exc
        except Exception as exc:  # a validator of the tool's own input type raised: the tool's failure
            if validate is None or not isinstance(exc, ValueError):
                raise ToolExecutionError(self._definition, exc) from exc
            # the raw schema's answer: named by its recovery, outside this handler; kept without its traceback,
            # which holds this frame (a reference cycle per invalid call, left to the garbage collector)
            failure = exc.with_traceback(None)
        if failure is not None and self._recover is not None:
            args = (self._recover(tool_input, failure),)
        if self._pass_context:
            return (*args, tool_context if tool_context is not None else ToolContext({}))
        return args


class FunctionToolCallbackBuilder:
    """Fluent builder of :class:`FunctionToolCallback` (``FunctionToolCallback.builder(name, fn)``)."""

    def __init__(self, name: str, func: Callable[..., Any] | None) -> None:
        check_tool_name(name)
        if func is not None and not callable(func):
            raise TypeError(f'func must be callable or None (a deferred tool), not {type(func).__name__}')
        if func is not None:
            check_not_unbound_method(func)
        self._name = name
        self._func = func
        self._description: str | None = None
        self._input_type: Any = None
        self._input_schema: Mapping[str, Any] | None = None
        self._return_direct = False
        self._max_retries = 1
        self._requires_approval: bool | ApprovalPredicate = False
        self._converter: ToolCallResultConverter | None = None

    def description(self, text: str) -> FunctionToolCallbackBuilder:
        """The tool description (default: the callable's docstring, else the name split into words).

        Raises:
            TypeError: ``text`` is not a ``str``. ValueError: ``text`` is empty or blank.
        """
        check_text('description', text)
        self._description = text
        return self

    def input_type(self, input_type: Any) -> FunctionToolCallbackBuilder:
        """Decode the whole argument object as one ``input_type`` (pydantic model, dataclass, TypedDict).

        Raises:
            TypeError: ``input_type`` is ``None`` (leave this call out to infer it from the callable).
        """
        if input_type is None:
            raise TypeError('input_type cannot be None (leave input_type() out to infer it from the callable)')
        self._input_type = input_type
        return self

    def input_schema(self, schema: Mapping[str, Any]) -> FunctionToolCallbackBuilder:
        """Use a raw JSON Schema, normalised by :func:`ensure_valid_input_schema`; the callable gets a ``dict``.

        Raises:
            TypeError: ``schema`` is not a mapping.
        """
        self._input_schema = ensure_valid_input_schema(schema)
        return self

    def tool_metadata(
        self, *, return_direct: bool = False, max_retries: int = 1, requires_approval: bool | ApprovalPredicate = False
    ) -> FunctionToolCallbackBuilder:
        """``return_direct``, the invalid-arguments retry budget and ``requires_approval`` (see ``ToolMetadata``)."""
        if max_retries < 0:
            raise ValueError(f'max_retries must be >= 0, got {max_retries}')
        ToolMetadata(requires_approval=requires_approval)  # validated now
        self._return_direct = return_direct
        self._max_retries = max_retries
        self._requires_approval = requires_approval
        return self

    def result_converter(self, converter: ToolCallResultConverter) -> FunctionToolCallbackBuilder:
        """Return value -> text (default :class:`DefaultToolCallResultConverter`).

        Raises:
            TypeError: ``converter`` has no ``convert`` method.
        """
        if not callable(getattr(converter, 'convert', None)):
            raise TypeError(f'converter must be a ToolCallResultConverter, not {type(converter).__name__}')
        self._converter = converter
        return self

    def build(self) -> FunctionToolCallback:
        """The callback.

        Raises:
            ValueError: both ``input_type`` and ``input_schema`` were given, or the callable takes
                more than one argument besides a ``ToolContext``.
            TypeError: ``input_type`` has no JSON Schema.
        """
        if self._input_type is not None and self._input_schema is not None:
            raise ValueError('give either input_type or input_schema, not both')
        inputs, pass_context = _signature(self._name, self._func) if self._func is not None else ([], False)
        input_type = self._input_type
        if input_type is None and self._input_schema is None and inputs:
            input_type = inputs[0]
        decoder: Callable[[ToolDefinition], Callable[[str], Any]] | None = None
        validator: SchemaValidator | None = None
        if self._input_schema is not None:
            schema = SchemaValidator(dict(self._input_schema)).schema
            validator = SchemaValidator(bounded_integers(schema))
        elif input_type is not None:
            schema, adapter = _type_schema(self._name, input_type)
            decoder = functools.partial(_type_decoder, adapter=adapter)
        else:
            schema = dict(_EMPTY_SCHEMA)
        function = self._func
        doc = inspect.getdoc(function) if inspect.isfunction(function) or inspect.ismethod(function) else None
        text = self._description or doc or name_to_description(self._name) or self._name
        definition = ToolDefinition(self._name, text, schema)
        decode = decoder(definition) if decoder is not None else None
        metadata = ToolMetadata(
            return_direct=self._return_direct,
            max_retries=self._max_retries,
            requires_approval=self._requires_approval,
            deferred=self._func is None,
        )
        converter = self._converter or DefaultToolCallResultConverter()
        raw = None if validator is None else _SchemaArguments(validator, _schema_recovery(definition, validator))
        return FunctionToolCallback(definition, metadata, self._func, decode, pass_context, converter, raw)


def _signature(name: str, func: Callable[..., Any]) -> tuple[list[Any], bool]:
    """Annotations of the non-context parameters, and whether a ``ToolContext`` is taken."""
    try:
        signature = inspect.signature(func)
    except (TypeError, ValueError):
        return [Any], False
    try:
        hints = typing.get_type_hints(func)
    except Exception:  # noqa: BLE001 - unresolvable annotations: treat as untyped
        hints = {}
    inputs: list[Any] = []
    pass_context = False
    for param in signature.parameters.values():
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        annotation = hints.get(param.name, Any)
        if isinstance(annotation, type) and issubclass(annotation, ToolContext):
            pass_context = True
        elif param.default is inspect.Parameter.empty:
            inputs.append(annotation)
    if len(inputs) > 1:
        raise ValueError(
            f"FunctionToolCallback '{name}': the callable takes {len(inputs)} arguments; it must take one "
            '(the whole argument object) or none (a supplier). Use MethodToolCallback for several parameters.'
        )
    return inputs, pass_context


def _type_schema(name: str, input_type: Any) -> tuple[dict[str, Any], pydantic.TypeAdapter[Any]]:
    """The input schema of ``input_type`` and the adapter that validates it.

    Raises:
        TypeError: ``input_type`` has no JSON Schema.
    """
    try:
        adapter: pydantic.TypeAdapter[Any] = pydantic.TypeAdapter(input_type)
        body = adapter.json_schema(ref_template='#/$defs/{model}', schema_generator=_ToolJsonSchema)
    except (pydantic.PydanticSchemaGenerationError, pydantic.PydanticUserError, TypeError) as exc:
        raise TypeError(f'tool {name!r}: input type {input_type!r} has no JSON Schema: {exc}') from exc
    schema: dict[str, Any] = {'$schema': SCHEMA_DIALECT, **clean_generated_schema(body)}
    if schema.get('type') == 'object':
        schema.setdefault('required', [])
    return forbid_additional_properties(schema), adapter


def _type_decoder(definition: ToolDefinition, adapter: pydantic.TypeAdapter[Any]) -> Callable[[str], Any]:
    """Argument text -> the value of ``adapter``'s type, in one pydantic ``validate_json`` step when it validates.

    The decoder raises ``ToolExecutionError`` for invalid arguments (its cause an ``InvalidToolArgumentsError``
    listing every problem), ``ToolArgumentsError`` for text that is not JSON, and whatever a validator of
    the type itself raises.
    """
    checked: list[pydantic_core.SchemaValidator | None] = []  # built on first use

    def decode(text: str) -> Any:
        if not checked:
            checked.append(checked_validator(adapter))
        if checked[0] is not None:  # numbers bounded in the schema: nothing to walk
            try:
                return checked[0].validate_json(text)
            except pydantic.ValidationError as exc:
                if not any(error['type'] in BOUND_ERRORS for error in exc.errors(include_url=False)):
                    return _fill_or_raise(definition, adapter, text, exc, checked[0])
        try:
            value = validate_json(adapter, text)
        except pydantic.ValidationError as exc:
            value = _fill_or_raise(definition, adapter, text, exc, checked[0])
        _check_numbers(definition, value, _dotted)
        return value

    return decode


def _fill_or_raise(
    definition: ToolDefinition,
    adapter: pydantic.TypeAdapter[Any],
    text: str,
    exc: pydantic.ValidationError,
    checked: pydantic_core.SchemaValidator | None,
) -> Any:
    """The value with ``None`` for left-out fields the schema does not require, else the precise error.

    Raises:
        ToolArgumentsError: ``text`` is not JSON (with the position).
        ToolExecutionError: the value does not validate (its cause lists every problem).
    """
    errors = exc.errors(include_url=False)
    if any(error['type'] == 'json_invalid' for error in errors):
        parse_arguments(text)  # raises ToolArgumentsError with the position
    raw = _parsed(text)
    filled = fill_missing_nullable(adapter, raw, exc)
    if filled is not None:
        return filled[0]
    problems = [f'{_dotted(error["loc"])}: {number_message(error)}' for error in errors]
    if isinstance(raw, dict):  # the top-level members that validated: their number problems, as parameters' are
        failed = {error['loc'][0] for error in errors if error['loc']}
        sent = {key: value for key, value in raw.items() if key not in failed}
        model = adapter.core_schema.get('cls') if adapter.core_schema.get('type') == 'model' else None
        problems += _valid_members_numbers(checked, model, sent)
    raise invalid_arguments(definition, problems)


def _valid_members_numbers(
    checked: pydantic_core.SchemaValidator | None, model: type[pydantic.BaseModel] | None, sent: dict[str, Any]
) -> list[str]:
    """The number problems of top-level members that validated (``sent``: their parsed JSON), in MethodToolCallback's words.

    Read from ``checked`` (the type with the numbers rule's bounds, :func:`checked_validator`) validating
    ``sent``: a number judged as its field's type makes it (``1e20`` is a fine ``float``, a problem as an
    ``int``); without it (a pydantic ``model``: its class validates it), each member as its field validates it
    alone, else as parsed, is walked (:func:`number_problems`).
    """
    if checked is None:
        return [
            f'{_dotted((key, *location))}: {reason}'
            for key, value in sent.items()
            for location, reason in _member_numbers(model, key, value)
        ]
    try:
        checked.validate_python(sent)
    except pydantic.ValidationError as exc:
        errors = exc.errors(include_url=False)
    else:
        return []
    found: list[str] = []
    for error in errors:
        location, kind = error['loc'], error['type']
        if not location or location[0] not in sent:
            continue  # a member that failed (left out of ``sent``): already named
        if kind in BOUND_ERRORS and isinstance(error.get('input'), int):
            found.append(f'{_dotted(location)}: {OUT_OF_RANGE}')
        elif kind == 'finite_number' or number_message(error) == NOT_FINITE:
            found.append(f'{_dotted(location)}: {NOT_FINITE}')
    return found


def _member_numbers(model: type[pydantic.BaseModel] | None, key: str, value: Any) -> list[tuple[Location, str]]:
    """``(location in the member, reason)`` of the number problems of one member (``value``, parsed) of a ``model`` type's input.

    The member is validated alone as its field (``validate_assignment`` on an empty instance, so ``"nan"`` for a
    ``float`` is the NaN it becomes and ``1e20`` a fine float); when that fails, or there is no model, as parsed.
    """
    member = value
    fields = model.model_fields if model is not None else {}
    name = next((n for n, info in fields.items() if key in (n, info.alias, info.validation_alias)), None)
    if model is not None and name is not None:
        try:
            instance = model.__pydantic_validator__.validate_assignment(model.model_construct(), name, value)
            member = getattr(instance, name)
        except pydantic.ValidationError as exc:  # from Python: an integer too large for a float is not finite
            finite = [(tuple(e['loc'][1:]), NOT_FINITE) for e in exc.errors() if number_message(e) == NOT_FINITE]
            if finite:
                return finite
        except Exception:  # noqa: BLE001 - a model validator that needs the other fields: walk it as parsed
            member = value
    return number_problems(member, value)


def _parsed(text: str) -> Any:
    """The argument text parsed as the slow path of ``MethodToolCallback`` reads it: JSON's ``NaN``/``Infinity`` too.

    Raises:
        ToolArgumentsError: ``text`` is not a JSON object, even with those words (with the position).
    """
    try:
        return parse_arguments(text)
    except ToolArgumentsError:
        extended = extended_arguments(text)
        if extended is None:
            raise
        return extended


class _SchemaArguments(NamedTuple):
    """A raw schema's argument decoding: ``validator.check_json(text, int64=True)``, else ``recover``."""

    validator: SchemaValidator
    recover: Callable[[str, ValueError | list[Failure]], Any]


def _schema_decoder(definition: ToolDefinition, validator: SchemaValidator) -> Callable[[str], Any]:
    """Argument text -> the ``dict`` ``validator`` (the Rust core's) accepts.

    The decoder raises ``ToolExecutionError`` for invalid arguments (its cause an ``InvalidToolArgumentsError``
    listing every failure as ``'<JSON pointer>: <reason>'``) and ``ToolArgumentsError`` for text that is not JSON.
    """
    recover = _schema_recovery(definition, validator)

    def decode(text: str) -> Any:
        # Accepted with int64: only finite numbers and signed 64-bit integers, nothing for a walk to find.
        failure: ValueError | list[Failure]
        try:
            checked = validator.check_json(text, int64=True)
        except ToolArgumentsError:
            raise
        except ValueError as exc:
            failure = exc.with_traceback(None)  # its traceback holds this frame: a cycle (see _arguments)
        else:
            if type(checked) is not list:
                return checked
            failure = checked
        return recover(text, failure)  # outside the handler: nothing chained but the cause

    return decode


def _schema_recovery(
    definition: ToolDefinition, validator: SchemaValidator
) -> Callable[[str, ValueError | list[Failure]], Any]:
    """What follows failures or a ``ValueError`` (not ``ToolArgumentsError``) from ``validator.check_json(text, int64=True)``.

    Failures (given only when no integer is beyond int64: as without it) raise ``ToolExecutionError`` (cause
    ``InvalidToolArgumentsError``, every failure as ``'<JSON pointer>: <reason>'``);
    a number beyond int64 or one JSON Schema cannot hold is named precisely (or the value returned, when the
    schema bounds nothing there). ``validator`` is ``bounded_integers(definition.input_schema)``'s: a failure at a
    bound it added reads as :data:`OUT_OF_RANGE` (:func:`~toolweave.tools._numbers.schema_problems`).
    """
    as_written = written_failures(definition.input_schema)

    def problems(failures: Sequence[Failure], text: str) -> list[str]:
        return schema_problems(failures, lambda: as_written(text))

    def recover(text: str, failure: ValueError | list[Failure]) -> Any:
        if type(failure) is list:
            raise invalid_arguments(definition, problems(failure, text))
        return numbers(text)

    def numbers(text: str) -> Any:
        try:
            value = validator.validate_json(text)
        except SchemaValidationError as exc:
            failures = problems(exc.errors, text)
        except ValueError as exc:  # the core refuses numbers JSON Schema cannot hold (infinite, beyond 64 bits)
            _check_numbers(definition, parse_arguments(text), _pointer, validator)
            failures = [f'/: {exc}']
        else:
            _check_numbers(definition, value, _pointer)
            return value
        raise invalid_arguments(definition, failures)

    return recover


def _check_numbers(
    definition: ToolDefinition, value: Any, where: Callable[[Location], str], schema: SchemaValidator | None = None
) -> None:
    """Raise ``ToolExecutionError`` (cause ``InvalidToolArgumentsError``) for each bad number in ``value``.

    Bad: non-finite, or an integer beyond the signed 64-bit range (:mod:`toolweave.tools._numbers`). With the raw
    ``schema`` that ``value`` is for, an integer beyond 64 bits where the schema takes any number (not only an
    integer) is worded as the float it would be, not finite (as MethodToolCallback words it for a ``float``).
    """
    problems = number_problems(value)
    if problems and schema is not None:
        problems = _as_schema_numbers(schema, value, problems)
    if problems:
        raise invalid_arguments(definition, [f'{where(location)}: {reason}' for location, reason in problems])


def _as_schema_numbers(
    schema: SchemaValidator, value: Any, problems: list[tuple[Location, str]]
) -> list[tuple[Location, str]]:
    """``problems`` with each integer too large for a float, where ``schema`` wants a number, worded not finite.

    MethodToolCallback's words for such an integer sent to a ``float`` (it would be infinite). Told by validating
    copies of ``value`` with ``0.5``, then ``''``, in place of those integers: a number is wanted there when the
    first passes and the second fails with ``type`` there (an untyped place keeps the range wording, as ``Any``).
    """
    huge = [
        location
        for location, reason in problems
        if reason == OUT_OF_RANGE and location and abs(_at(value, location)) > sys.float_info.max
    ]
    if not huge:
        return problems
    as_number, as_text = (_type_failures(schema, value, huge, probe) for probe in (0.5, ''))
    numbers = ({_pointer(location) for location in huge} - as_number) & as_text
    return [(location, NOT_FINITE if _pointer(location) in numbers else reason) for location, reason in problems]


def _type_failures(schema: SchemaValidator, value: Any, locations: list[Location], probe: Any) -> set[str]:
    """The JSON pointers of ``type`` failures of ``value`` with ``probe`` at each of ``locations``."""
    copied = copy.deepcopy(value)
    for location in locations:
        _at(copied, location[:-1])[location[-1]] = probe
    try:
        schema.validate(copied)
    except SchemaValidationError as exc:
        return {error['pointer'] or '/' for error in exc.errors if error['keyword'] == 'type'}
    return set()


def _at(value: Any, location: Location) -> Any:
    for part in location:
        value = value[part]
    return value


def _dotted(location: Location) -> str:
    """A pydantic-style location: ``items.0.price``, ``(arguments)`` for the whole object."""
    return dotted(location) or '(arguments)'


def _pointer(location: Location) -> str:
    """A JSON pointer (RFC 6901): ``/items/0/price``, ``/`` for the whole object."""
    return ''.join('/' + str(part).replace('~', '~0').replace('/', '~1') for part in location) or '/'
