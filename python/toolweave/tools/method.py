"""``MethodToolCallback``: a Python function as a tool (Spring AI ``MethodToolCallback``).

Arguments are validated and coerced by pydantic-core in one step from the raw text
(``validate_json`` on a TypedDict of the parameters, unknown keys rejected), in lax mode (``"3"``
for an ``int`` becomes ``3``; dates, enums and models are built). When that fails, the slow path
gives the precise reasons: the Rust core parses the text (:func:`toolweave._native.parse_arguments`,
with the error position), fields of nested models that admit ``None`` and were left out are filled
with ``None`` (Spring's required rule says they are optional), and each parameter is validated on
its own so that every failing field is listed in the ``ToolExecutionError`` message. Numbers the
model sent must be finite, and integers within the signed 64-bit range (:mod:`toolweave.tools._numbers`);
an exception raised by a validator of the tool's own types becomes a ``ToolExecutionError`` too.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import copy
import inspect
import json
import logging
import operator
import re
from collections.abc import Callable, Collection, Coroutine, Mapping
from typing import Any

import pydantic
import pydantic_core

from toolweave._native import IMPLEMENTATION, ArgumentDecoder, parse_arguments
from toolweave.exceptions import InvalidToolArgumentsError, ToolArgumentsError, ToolExecutionError
from toolweave.tools._numbers import (
    BOUND_ERRORS,
    WORDED,
    dotted,
    extended_arguments,
    may_hold_inf_nan,
    number_message,
    number_problems,
    numbers_checker,
)
from toolweave.tools.context import ToolContext
from toolweave.tools.converter import DefaultToolCallResultConverter, ToolCallResultConverter
from toolweave.tools.decorator import get_tool_spec
from toolweave.tools.definition import ToolDefinition, ToolMetadata, check_text
from toolweave.tools.schema import (
    FunctionSchema,
    ParameterSchema,
    SchemaOption,
    function_schema,
    name_to_description,
    parameter_default,
)

__all__ = ['MethodToolCallback']

# errors the one-step path leaves to the slow one (which words them its own way, or may accept the value)
_SLOW_PATH_ERRORS = BOUND_ERRORS | WORDED.keys() | {'missing', 'json_invalid', 'json_type'}
_PYTHON_WORDING = {
    'missing': '',
    'string_type': '',
    'int_type': '',
    'float_type': '',
    'bool_type': '',
    'list_type': 'Input should be a valid list',
    'dict_type': 'Input should be a valid dictionary',
}
"""Certain errors the slow path words as pydantic does for Python input (its validation of the parsed arguments):
their message, or ``''`` for the same message as for JSON."""
_UNASKED: Any = object()  # MethodToolCallback._values: the decoder was not asked yet
_DECODER: type[ArgumentDecoder] | None = ArgumentDecoder if IMPLEMENTATION == 'rust' else None
"""Decodes valid arguments before pydantic is asked: the Rust core's only (its pure-Python twin, a walk in Python,
costs several times the ``validate_json`` it would save; ``TOOLWEAVE_PURE=1`` runs pydantic's step as before)."""

logger = logging.getLogger('toolweave.tools')
_NAME_PATTERN = re.compile(r'^[a-zA-Z0-9_.-]+$')
_MAX_NAME_LENGTH = 64


def check_tool_name(name: str) -> None:
    """Reject an empty name; warn (never fail) when some providers may reject ``name`` (Spring's ``ToolUtils``).

    Raises:
        TypeError: ``name`` is not a ``str``.
        ValueError: ``name`` is empty or blank.
    """
    check_text('name', name)
    if not _NAME_PATTERN.match(name) or len(name) > _MAX_NAME_LENGTH:
        logger.warning(
            "Tool name '%s' may not be compatible with some LLMs (expected ^[a-zA-Z0-9_\\.-]+$ and at most %d "
            'characters).',
            name,
            _MAX_NAME_LENGTH,
        )


def check_not_unbound_method(func: Callable[..., Any]) -> None:
    """Reject a method taken from its class (``Class.method``): its ``self`` would never be filled in.

    Raises:
        TypeError: ``func`` is a plain function whose first parameter is ``self`` or ``cls``.
    """
    if not inspect.isfunction(func):
        return
    first = next(iter(inspect.signature(func).parameters.values()), None)
    if first is not None and first.name in ('self', 'cls') and first.kind is not inspect.Parameter.KEYWORD_ONLY:
        raise TypeError(
            f'{func.__qualname__} is an unbound method (its first parameter is {first.name!r}): pass the method '
            f'of an instance (obj.{func.__name__}) or the instance itself (its @tool methods are collected)'
        )


class MethodToolCallback:
    """Runs a Python function (sync or async, plain function or bound method) as a tool.

    >>> def add(a: int, b: int) -> int:
    ...     return a + b
    >>> MethodToolCallback(add).call('{"a": 1, "b": "2"}')
    '3'

    Args:
        func: The function; a ``@tool`` marker supplies defaults for the other arguments.
        name: Tool name (default: ``@tool(name=)``, else ``func.__name__``).
        description: Tool description (default: ``@tool(description=)``, else the docstring,
            else the name split into words).
        return_direct: Return the result to the caller instead of the model.
        result_converter: Return value -> text (default :class:`DefaultToolCallResultConverter`).
        max_retries: Invalid-argument answers per turn before the run fails (default: ``@tool``'s, else 1).
        schema_options: :class:`~toolweave.tools.schema.SchemaOption` values for the input schema.

    Raises:
        TypeError: ``func`` is not callable, is an unbound method (``Class.method``), takes ``**kwargs``
            or has a parameter type with no JSON Schema.
        ValueError: ``name`` or ``description`` is empty.
    """

    def __init__(
        self,
        func: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        return_direct: bool | None = None,
        result_converter: ToolCallResultConverter | None = None,
        max_retries: int | None = None,
        schema_options: Collection[SchemaOption] = (),
    ) -> None:
        if isinstance(func, staticmethod):
            func = func.__func__
        if isinstance(func, classmethod):
            raise TypeError('pass the bound class method (Class.method), not the classmethod object')
        if not callable(func):
            raise TypeError(f'func must be callable, not {type(func).__name__}')
        check_not_unbound_method(func)
        spec = get_tool_spec(func)
        self._func = func
        self._schema: FunctionSchema = function_schema(func, schema_options)
        self._param_names = frozenset(p.name for p in self._schema.parameters)
        # SchemaOption.ALLOW_ADDITIONAL_PROPERTIES_BY_DEFAULT leaves the schema open: extras are then ignored
        self._forbids_extra = self._schema.input_schema.get('additionalProperties') is False
        positional = tuple(p.name for p in self._schema.parameters if not p.keyword_only)
        self._only = positional[0] if len(positional) == 1 else None  # one positional parameter: no getter call
        self._positional = _getter(positional)
        self._keywords = tuple(p.name for p in self._schema.parameters if p.keyword_only)
        self._context = self._schema.context_parameter
        self._is_async = self._schema.is_async
        self._numbers_check: Callable[[Any], bool] | None | bool = False  # False: not built yet (first call)
        self._decoder: Any = False  # ArgumentDecoder | None; False: not built yet (first call)
        self._fills = tuple(p for p in self._schema.parameters if not p.required)
        self._finishes_decoded = True  # what the decoder gives needs _values (set when the decoder is built)
        self._judges_decoded = False  # the decoder leaves a typed dict's factory results unjudged
        tool_name = _first_given(name, spec.name if spec else None, getattr(func, '__name__', type(func).__name__))
        assert tool_name is not None  # the callable's own name ends the chain
        check_tool_name(tool_name)
        text = _first_given(description, spec.description if spec else None)
        if text is None:
            text = self._schema.summary or name_to_description(tool_name) or tool_name
        self._definition = ToolDefinition(tool_name, text, self._schema.input_schema)
        direct = return_direct if return_direct is not None else bool(spec and spec.return_direct)
        retries = max_retries if max_retries is not None else (spec.max_retries if spec else 1)
        self._metadata = ToolMetadata(
            return_direct=direct,
            sequential=bool(spec and spec.sequential),
            timeout=spec.timeout if spec else None,
            max_retries=retries,
            requires_approval=spec.requires_approval if spec else False,
            deferred=bool(spec and spec.deferred),
        )
        converter = result_converter or (spec.result_converter if spec else None)
        self._converter: ToolCallResultConverter = converter or DefaultToolCallResultConverter()
        self._str_as_is = type(self._converter) is DefaultToolCallResultConverter  # a str result is the text

    @classmethod
    def from_function(cls, func: Callable[..., Any]) -> MethodToolCallback:
        """Build from a (possibly ``@tool``-marked) function or bound method."""
        return cls(func)

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
        overridden = type(self).call is not MethodToolCallback.call or type(self).acall is not MethodToolCallback.acall
        return overridden or self._schema.context_parameter is not None

    @property
    def tool_metadata(self) -> ToolMetadata:
        """``return_direct`` flag."""
        return self._metadata

    @property
    def function(self) -> Callable[..., Any]:
        """The wrapped function."""
        return self._func

    def __repr__(self) -> str:
        return f'MethodToolCallback(name={self._definition.name!r})'

    def call(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        """Parse, validate, run and convert.

        Args:
            tool_input: The argument JSON object text from the model.
            tool_context: Side-channel values, for functions that declare a ``ToolContext`` parameter.

        Returns:
            The result text for the model.

        Raises:
            ValueError: ``tool_input`` is empty, or the function needs a ``ToolContext`` and got none.
            ToolExecutionError: invalid arguments, or the function raised (the cause is attached).
        """
        args, kwargs = self._bind(tool_input, tool_context)
        if self._is_async:
            result = _run_coroutine(self._invoke_async(args, kwargs))
        else:
            try:  # _invoke's own handling, without its frame
                result = self._func(*args, **kwargs)
            except ToolExecutionError:
                raise
            except Exception as exc:
                raise ToolExecutionError(self._definition, exc) from exc
        if self._str_as_is and isinstance(result, str):
            return result  # convert_result's own answer, without its frame
        return convert_result(self._definition, self._converter, result)

    async def acall(self, tool_input: str, tool_context: ToolContext | None = None) -> str:
        """Async :meth:`call`: async functions run on the running loop, sync ones in a worker thread."""
        args, kwargs = self._bind(tool_input, tool_context)
        if self._is_async:
            result = await self._invoke_async(args, kwargs)
        else:
            result = await asyncio.to_thread(self._invoke, args, kwargs)
        return convert_result(self._definition, self._converter, result)

    def _invoke(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        try:
            return self._func(*args, **kwargs)
        except ToolExecutionError:
            raise  # the tool's own: not wrapped a second time (Spring's FunctionToolCallback)
        except Exception as exc:
            raise ToolExecutionError(self._definition, exc) from exc

    async def _invoke_async(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        try:
            return await self._func(*args, **kwargs)
        except ToolExecutionError:
            raise
        except Exception as exc:
            raise ToolExecutionError(self._definition, exc) from exc

    def _bind(self, tool_input: str, tool_context: ToolContext | None) -> tuple[tuple[Any, ...], dict[str, Any]]:
        if not isinstance(tool_input, str):
            raise TypeError(f'tool_input must be the argument JSON text (str), not {type(tool_input).__name__}')
        if not tool_input or tool_input.isspace():  # what `not tool_input.strip()` says, without copying the text
            raise ValueError('tool_input cannot be null or empty')
        try:  # the decoder's certain answer as it is, without _values' frame: the common call
            decoder = self._decoder
            values = decoder.decode(tool_input) if decoder else None
            if values is None or self._finishes_decoded:
                values = self._values(tool_input, values)
        except ToolExecutionError:
            raise
        except Exception as exc:  # a validator of the tool's own types (or a factory) raised: the tool's failure
            raise ToolExecutionError(self._definition, exc) from exc
        only = self._only
        args = (values[only],) if only is not None else self._positional(values)
        kwargs = {name: values[name] for name in self._keywords} if self._keywords else {}
        if self._context is not None:
            if tool_context is None:
                raise ValueError(f"tool '{self._definition.name}' declares a ToolContext parameter but got none")
            position = self._schema.context_position
            if position is None:
                kwargs[self._context] = tool_context
            else:
                args = (*args[:position], tool_context, *args[position:])
        return args, kwargs

    def _values(self, tool_input: str, decoded: Any = _UNASKED) -> dict[str, Any]:
        """Every parameter's value: the decoder's, else the one-step path's, else the slow one that lists every problem.

        ``decoded`` is the decoder's answer when :meth:`_bind` asked it (``None``: not certain, or no decoder, or
        none built yet: the first call builds it and asks it here).
        """
        if decoded is _UNASKED or self._decoder is False:
            decoder = self._decoder if self._decoder is not False else self._build_decoder()
            decoded = None if decoder is None else decoder.decode(tool_input)
        if decoded is None:
            values = self._validate_fast(tool_input)
        elif self._judges_decoded:
            values = self._judged(decoded)  # a typed dict's factory result is in it, unjudged: as validate_json's
        else:
            values = self._with_defaults(decoded)  # what validate_json gives, numbers fine: nothing to walk
        if isinstance(values, dict):
            return values
        try:
            raw = parse_arguments(tool_input)
        except ToolArgumentsError as exc:
            extended = extended_arguments(tool_input)  # NaN/Infinity: number problems, as on the one-step path
            if extended is None:
                raise syntax_error(self._definition, exc) from exc
            raw = extended
        return self._validate(raw, tool_input, values or ())

    def _validate_fast(self, tool_input: str) -> dict[str, Any] | list[pydantic_core.ErrorDetails] | None:
        """One step from the text (pydantic ``validate_json``); its errors or ``None`` when the slow path must decide.

        Runs when the Rust ``ArgumentDecoder`` (:meth:`_build_decoder`) is absent or not certain (``None``:
        invalid, a lax coercion, types outside its subset); what it decodes is exactly what this step gives.
        With ``checked_arguments`` (numbers bounded in the schema) nothing is walked afterwards, and
        a failure is reported from its own error when that says what the slow path would; with
        ``arguments`` the numbers are walked, and a failure is reported from its error when, besides,
        every parameter sent failed (:meth:`_all_sent_failed`). A number problem the walk finds is
        left to the slow path, which knows what was sent (a ``default_factory`` value is not judged).
        The errors of a failed step go to the slow path too (:meth:`_validate`: a repeated key).

        Arguments the decoder finds surely invalid (``ArgumentDecoder.errors``: exactly the errors pydantic would
        raise, every value that passed within the numbers rule) skip pydantic: reported from those errors when
        :meth:`_problems_of` can, else handed to the slow path.

        Raises:
            ToolExecutionError: invalid arguments.
        """
        decoder = self._decoder
        certain: list[pydantic_core.ErrorDetails] | None = decoder.errors(tool_input) if decoder else None
        if certain is not None:
            problems = self._problems_of(certain, certain=True)
            if problems is None:
                return certain
            raise invalid_arguments(self._definition, problems)
        checked = self._schema.checked_arguments
        if checked is not None:
            try:
                values = checked.validate_json(tool_input)
                return self._with_defaults(values) if self._fills else values
            except pydantic.ValidationError as exc:
                errors = exc.errors(include_url=False, include_context=False, include_input=False)
            problems = self._problems_of(errors)
            if problems is None or not _read_as_strict_json(tool_input):
                return errors
            # outside the handler: pydantic's error is not chained (its text is here)
            raise invalid_arguments(self._definition, problems)
        adapter = self._schema.arguments
        if adapter is None:
            return None
        try:
            values = validate_json(adapter, tool_input)
        except pydantic.ValidationError as exc:
            errors = exc.errors(include_url=False, include_context=False, include_input=False)
            problems = self._problems_of(errors)
            if problems is None or not self._all_sent_failed(errors, tool_input):
                return errors
        else:
            return self._judged(values)
        raise invalid_arguments(self._definition, problems)

    def _repeated_key_problems(self, text: str, names: Collection[str], raw: Mapping[str, Any]) -> dict[str, list[str]]:
        """The problems pydantic finds in each parameter of ``names`` whose value in ``text`` holds a repeated key.

        pydantic validates every pair of a ``dict`` (``{"a": "x", "a": 2}`` fails a ``dict[str, int]``), while
        the slow path sees only the last of repeated keys (:func:`repeated_key_owners`); ``raw`` is what it saw.
        A left-out field that admits ``None`` is not counted: the slow path fills it (:func:`fill_missing_nullable`);
        one that does not is (:func:`_takes_none`).
        """
        owners = repeated_key_owners(text).intersection(names)
        adapter = self._schema.arguments
        found: dict[str, list[str]] = {}
        if not owners or adapter is None:
            return found
        adapters = {param.name: param.adapter for param in self._schema.parameters}
        try:
            validate_json(adapter, text)
        except pydantic.ValidationError as exc:
            for error in exc.errors(include_url=False):
                location = error['loc']
                if not location or location[0] not in owners:
                    continue
                name = str(location[0])
                if error['type'] == 'missing' and _takes_none(adapters[name], raw.get(name), location[1:]):
                    continue
                found.setdefault(name, []).append(f'{dotted(location)}: {number_message(error)}')
        return found

    def _judged(self, values: dict[str, Any]) -> dict[str, Any] | None:
        """``values`` as ``arguments`` validated them, with the defaults filled; ``None`` when a number is a problem.

        The slow path names the problems, knowing what was sent (not a default) and what is not JSON.
        """
        adapter = self._schema.arguments
        if adapter is not None and not self._numbers_fine(adapter, values) and number_problems(values):
            return None
        return self._with_defaults(values) if self._fills else values

    def _build_decoder(self) -> ArgumentDecoder | None:
        """The Rust ``ArgumentDecoder`` of ``arguments`` (built on the first call; ``None``: none).

        It decodes valid arguments exactly as ``validate_json`` and the numbers walk would accept them,
        without pydantic, so neither runs for them; ``None`` when the schema is outside its subset (or the
        validator is still deferred: tried again next call).
        """
        adapter = self._schema.arguments
        if _DECODER is None or adapter is None or type(adapter.validator) is not pydantic_core.SchemaValidator:
            return None
        decoder = _DECODER.build(adapter.core_schema)
        self._judges_decoded = decoder is not None and decoder.typed_dict_factories
        self._finishes_decoded = bool(self._fills) or self._judges_decoded
        self._decoder = decoder  # last: another thread's call reads the two flags once it sees the decoder
        return decoder

    def _numbers_fine(self, adapter: pydantic.TypeAdapter[Any], values: dict[str, Any]) -> bool:
        """Whether ``values`` (validated by ``adapter``) pass the schema's generated check (:func:`numbers_checker`).

        ``False`` only means "walk them" (:func:`number_problems`, which names the problems).
        """
        check = self._numbers_check
        if check is False:
            check = self._numbers_check = numbers_checker(adapter.core_schema)
        return callable(check) and check(values)

    def _with_defaults(self, values: dict[str, Any]) -> dict[str, Any]:
        """``values`` with each optional parameter left out set to its default (:func:`parameter_default`)."""
        for param in self._fills:
            if param.name not in values:
                values[param.name] = parameter_default(param, values)
        return values

    def _all_sent_failed(self, errors: list[pydantic_core.ErrorDetails], tool_input: str) -> bool:
        """Whether every parameter in ``tool_input`` has one of the ``errors`` (of ``arguments``, numbers unbounded).

        The slow path also lists the number problems of the parameters that validated; when none
        did, the one-step error says all it would (a model with numbers has no bounded validator:
        pydantic-core validates it with the class's own).
        """
        failed = set()
        for error in errors:  # a loop: a comprehension is a call of its own
            if error['loc']:
                failed.add(error['loc'][0])
        if failed >= self._param_names:  # every parameter failed: whatever was sent failed
            return _read_as_strict_json(tool_input)
        try:
            sent = parse_arguments(tool_input).keys() & self._param_names
        except ToolArgumentsError:
            return False
        return sent <= failed

    def _problems_of(self, errors: list[pydantic_core.ErrorDetails], certain: bool = False) -> list[str] | None:
        """The problems :meth:`_validate` would list, read from the one-step validation's errors.

        ``None`` when only the slow path can tell: text that is not a JSON object, numbers refused
        by the bounds of ``checked_arguments`` or worded by the numbers rule (``1e20`` for an ``int``: the
        slow path names them its own way, :func:`~toolweave.tools._numbers.number_message`), left-out
        fields (a nested one may be filled with ``None``; a parameter may have a default), a value
        of the wrong JSON type (``*_type``: pydantic words those differently for JSON and Python input).
        ``certain`` errors (``ArgumentDecoder.errors``) name left-out fields that do not take ``None`` (else
        it has no answer) and values of a JSON type never taken: the slow path would list them as they are
        (a left-out parameter as a missing required argument), in pydantic's words for Python input
        (:data:`_PYTHON_WORDING`); a model's ``model_type`` (its words name the class) still goes to it.
        """
        unexpected: list[str] = []
        problems: list[str] = []
        for error in errors:
            location, kind = error['loc'], error['type']
            if certain and location and kind in _PYTHON_WORDING:
                if kind == 'missing' and len(location) == 1:
                    problems.append(f'{location[0]}: missing required argument')
                else:
                    problems.append(f'{dotted(location)}: {_PYTHON_WORDING[kind] or error["msg"]}')
                continue
            if not location or kind in _SLOW_PATH_ERRORS or kind.endswith('_type'):
                return None
            if kind == 'extra_forbidden' and len(location) == 1:
                problem = f'unexpected argument {location[0]!r}'
                if problem not in unexpected:  # one error per pair of a repeated key: named once
                    unexpected.append(problem)
            else:
                problems.append(f'{dotted(location)}: {error["msg"]}')
        return unexpected + problems

    def _validate(
        self, raw: Mapping[str, Any], text: str = '', one_step: Collection[pydantic_core.ErrorDetails] = ()
    ) -> dict[str, Any]:
        """Each parameter validated apart from its parsed JSON, every problem listed (the slow path).

        ``raw`` is ``text`` parsed, the last of repeated keys kept; ``one_step`` the errors of the one-step
        validation, if it failed. A parameter valid here but not there may hold a repeated key whose
        earlier value fails (:meth:`_repeated_key_problems`).

        Raises:
            ToolExecutionError: invalid arguments.
        """
        values: dict[str, Any] = {}
        problems: list[str] = []
        if self._forbids_extra:  # else extras are allowed, and ignored: the function never gets them
            problems.extend(f'unexpected argument {key!r}' for key in raw if key not in self._param_names)
        one_step_failed = {error['loc'][0] for error in one_step if error['loc']}
        passed: dict[str, int] = {}  # failed the one-step validation only -> where its problems go
        for param in self._schema.parameters:
            try:
                values[param.name] = _validate_parameter(param, raw, values)
            except pydantic.ValidationError as exc:
                filled = fill_missing_nullable(param.adapter, raw[param.name], exc) if param.name in raw else None
                if filled is None:
                    problems.extend(_with_nested_extras(param.name, exc.errors(include_url=False), one_step))
                    continue
                values[param.name] = filled[0]
            except KeyError:
                problems.append(f'{param.name}: missing required argument')
                continue
            if param.name in one_step_failed:
                passed[param.name] = len(problems)
        if passed:
            found = self._repeated_key_problems(text, passed.keys(), raw)
            for name, at in reversed(passed.items()):
                problems[at:at] = found.get(name) or _with_nested_extras(name, [], one_step)
        sent = {name: value for name, value in values.items() if name in raw}
        for location, reason in number_problems(sent, {name: raw[name] for name in sent}):
            problems.append(f'{dotted(location)}: {reason}')
        if problems:
            raise invalid_arguments(self._definition, problems)
        return values


def validate_json(adapter: pydantic.TypeAdapter[Any], text: str) -> Any:
    """``adapter.validate_json(text)``, through the adapter's built validator when it has one.

    ``TypeAdapter.validate_json`` costs about as much again as validating a small object; a validator
    still deferred (``defer_build``: a mock that rebuilds from its caller's frame) goes through it.

    Raises:
        pydantic.ValidationError: as ``adapter.validate_json``.
    """
    validator = adapter.validator
    if type(validator) is pydantic_core.SchemaValidator:
        return validator.validate_json(text)
    return adapter.validate_json(text)


def invalid_arguments(definition: ToolDefinition, problems: list[str]) -> ToolExecutionError:
    """The error of a call whose arguments fail the tool's types or schema, to raise as it is.

    Its message is the ``InvalidToolArgumentsError``'s (``Invalid arguments for tool '<name>': <problem>; ...``),
    which is its ``cause`` and ``__cause__``; that cause is never raised itself (no traceback or context of its own).
    Raise it without ``from`` (``from None`` would drop the cause).
    """
    cause = InvalidToolArgumentsError(definition.name, problems)
    return ToolExecutionError(definition, cause, cause.message)


def syntax_error(definition: ToolDefinition, exc: ToolArgumentsError) -> ToolExecutionError:
    """The error of a call whose argument text is not a JSON object (cause: the core's ``ToolArgumentsError``).

    Message: ``Invalid arguments for tool '<name>': <the core's message, with the position>``.
    """
    return ToolExecutionError(definition, exc, f"Invalid arguments for tool '{definition.name}': {exc}")


def convert_result(definition: ToolDefinition, converter: ToolCallResultConverter, result: Any) -> str:
    """``result`` as text through ``converter``; a ``str`` through the default converter is returned as it is.

    Raises:
        ToolExecutionError: the converter raised (its cause), or returned something else than a ``str``.
    """
    if type(converter) is DefaultToolCallResultConverter and isinstance(result, str):
        return result  # what the default converter returns for a str, without the calls
    try:
        text = converter.convert(result, None)
    except ToolExecutionError:
        raise
    except Exception as exc:
        raise ToolExecutionError(definition, exc) from exc
    if not isinstance(text, str):
        problem = TypeError(f'result converter {converter!r} returned {type(text).__name__}, not str')
        raise ToolExecutionError(definition, problem)
    return text


def _validate_parameter(param: ParameterSchema, raw: Mapping[str, Any], values: dict[str, Any]) -> Any:
    if param.name in raw:
        return param.adapter.validate_python(raw[param.name])
    if not param.required:
        return parameter_default(param, values)
    raise KeyError(param.name)


def fill_missing_nullable(
    adapter: pydantic.TypeAdapter[Any], value: Any, exc: pydantic.ValidationError
) -> tuple[Any] | None:
    """Retry with ``None`` for nested fields reported missing: ``(validated,)`` if that validates, else ``None``.

    The schema leaves fields that admit ``None`` out of ``required`` (Spring's rule) while pydantic
    requires them when they have no default; a field that does not admit ``None`` still fails.

    Args:
        adapter: Validates ``value``.
        value: The plain value (parsed JSON) that failed.
        exc: Its validation error.
    """
    errors = exc.errors(include_url=False)
    if not errors or any(e['type'] != 'missing' or not e['loc'] for e in errors):
        return None
    value = _with_none_at(value, [tuple(error['loc']) for error in errors])
    if value is _NOT_AN_OBJECT:
        return None
    try:
        return (adapter.validate_python(value),)
    except pydantic.ValidationError:
        return None


_NOT_AN_OBJECT: Any = object()  # _with_none_at: a location does not lead to an object


def _with_none_at(value: Any, locations: list[tuple[Any, ...]]) -> Any:
    """A deep copy of ``value`` with ``None`` set at each location (keys and indices down to a field of an object).

    :data:`_NOT_AN_OBJECT` when a location does not lead to an object in ``value``.
    """
    value = copy.deepcopy(value)
    for location in locations:
        node = value
        *path, last = location
        for part in path:
            try:
                node = node[part]
            except (KeyError, IndexError, TypeError):
                return _NOT_AN_OBJECT
        if not isinstance(node, dict):
            return _NOT_AN_OBJECT
        node[last] = None
    return value


def _takes_none(adapter: pydantic.TypeAdapter[Any], value: Any, location: tuple[Any, ...]) -> bool:
    """Whether the field at ``location`` inside ``value`` (a parameter's parsed value, valid) validates as ``None``.

    ``False`` when ``location`` does not lead to an object in ``value`` (another pair's shape): the error stands.
    """
    if not location:
        return False
    value = _with_none_at(value, [location])
    if value is _NOT_AN_OBJECT:
        return False
    try:
        adapter.validate_python(value)
    except pydantic.ValidationError as exc:
        return all(tuple(error['loc']) != tuple(location) for error in exc.errors(include_url=False))
    return True


def _describe(name: str, error: Any) -> str:
    return f'{dotted((name, *error["loc"]))}: {number_message(error)}'


def _with_nested_extras(name: str, errors: list[Any], one_step: Collection[pydantic_core.ErrorDetails]) -> list[str]:
    """The problems of parameter ``name``: its own ``errors`` (the slow path's), with the one-step's extras below it.

    A TypedDict inside the arguments inherits their ``extra='forbid'`` in the one-step validation (the schema says
    ``additionalProperties: false``), while the parameter's own adapter ignores extras: its extras are taken from
    ``one_step``, in that validation's order (pydantic's), each of ``errors`` at the place of the one-step error
    at its location (the rest last).
    """
    own = [error for error in one_step if len(error['loc']) > 1 and error['loc'][0] == name]
    if not any(error['type'] == 'extra_forbidden' for error in own):
        return [_describe(name, error) for error in errors]
    pending = list(errors)
    problems: list[str] = []
    for error in own:
        if error['type'] == 'extra_forbidden':
            problem = f'{dotted(error["loc"])}: {error["msg"]}'
            if problem not in problems:  # one error per pair of a repeated key: named once
                problems.append(problem)
            continue
        here = [mine for mine in pending if tuple(mine['loc']) == error['loc'][1:]]
        problems.extend(_describe(name, mine) for mine in here)
        pending = [mine for mine in pending if mine not in here]
    return problems + [_describe(name, mine) for mine in pending]


class _Repeated(dict[str, Any]):
    """A parsed JSON object holding a repeated key, in itself or in an object inside it."""


def _marked(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs) or any(_holds_repeated(member) for _, member in pairs):
        return _Repeated(value)
    return value


def _holds_repeated(value: Any) -> bool:
    """Whether ``value`` is a :class:`_Repeated` or a list holding one at any list depth.

    A loop, not recursion: an array nested as deep as ``json`` reads it raises no ``RecursionError``
    (objects inside are marked already, by :func:`_marked`).
    """
    pending = [value]
    while pending:
        item = pending.pop()
        if type(item) is _Repeated:
            return True
        if type(item) is list:
            pending.extend(item)
    return False


def repeated_key_owners(text: str) -> set[str]:
    """The top-level keys of ``text`` (a JSON object) whose value holds an object with a repeated key.

    ``parse_arguments`` keeps the last of repeated keys, so what pydantic said of an earlier one is
    not seen in its result. Empty when ``text`` is not a JSON object (Python's ``json`` reads it here,
    ``NaN``/``Infinity`` included); a repeated key of the top-level object itself is not counted
    (pydantic's arguments validation keeps its last value too).
    """
    try:
        top = json.loads(text, object_pairs_hook=_marked)
    except (ValueError, RecursionError):
        return set()
    if not isinstance(top, dict):
        return set()
    return {key for key, value in top.items() if _holds_repeated(value)}


def _getter(names: tuple[str, ...]) -> Callable[[Mapping[str, Any]], tuple[Any, ...]]:
    """``values -> tuple(values[name] for name in names)``, as one C call when there are two names or more."""
    if len(names) >= 2:
        return operator.itemgetter(*names)
    if names:
        (name,) = names
        return lambda values: (values[name],)
    return lambda values: ()


def _first_given(*values: str | None) -> str | None:
    """The first value that is not ``None`` (an explicit ``''`` is kept, and rejected by ``ToolDefinition``)."""
    return next((v for v in values if v is not None), None)


def _run_coroutine(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run ``coro`` to completion from sync code, in a helper thread when a loop already runs here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def _read_as_strict_json(text: str) -> bool:
    """Whether ``text``, which pydantic's JSON parser read whole, is strict JSON as the slow path reads it.

    pydantic parses the whole text before validating (a validation error means it parsed), and its
    parser (jiter, ``allow_inf_nan``) takes ``NaN``, ``Infinity`` and ``-Infinity`` besides strict
    JSON, which the slow path refuses as syntax errors: only a text holding one of those words is
    parsed again to tell.
    """
    if not may_hold_inf_nan(text):
        return True
    try:
        parse_arguments(text)
    except ToolArgumentsError:
        return False
    return True
