"""Exceptions raised by toolweave (the Rust core's errors are re-exported here too)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolweave.chat.messages import Message, ToolResponse
    from toolweave.chat.response import Generation
    from toolweave.tools.definition import ToolDefinition

__all__ = [
    'AuthenticationError',
    'BadRequestError',
    'ChatModelError',
    'ContextLengthError',
    'IncompleteStreamError',
    'InvalidApiKeyError',
    'InvalidToolArgumentsError',
    'LocalModelError',
    'MissingApiKeyError',
    'ProviderConnectionError',
    'ProviderError',
    'ProviderRedirectError',
    'ProviderStreamError',
    'ProviderTimeoutError',
    'RateLimitError',
    'ResponseFormatError',
    'ResponseTooLargeError',
    'SchemaValidationError',
    'ServerError',
    'StreamFormatError',
    'ToolArgumentsError',
    'ToolCallLimitExceededError',
    'ToolExecutionError',
    'ToolRetryBudgetExceededError',
]

# --- Rust core (toolweave._core) -----------------------------------------------------------------
# The Rust implementation looks these classes up here, so it and the pure-Python twins
# (toolweave._reference, TOOLWEAVE_PURE=1) raise the very same classes. This module must not import
# toolweave._core.


class ToolArgumentsError(ValueError):
    """Tool-call arguments are not a JSON object (raised by ``parse_arguments``).

    Attributes:
        message: The full message.
        position: 0-based offset of the error in characters (code points) of the text.
        excerpt: Up to 20 characters either side of the position.
        line: 1-based line of the position.
        column: 1-based column (in characters) of the position.
    """

    __slots__ = ('column', 'excerpt', 'line', 'message', 'position')  # no per-instance dict to build (hot path)

    def __init__(self, message: str, position: int = 0, excerpt: str = '', line: int = 1, column: int = 1) -> None:
        self.args = (message,)  # what BaseException.__init__(message) sets, without the call
        self.message = message
        self.position = position
        self.excerpt = excerpt
        self.line = line
        self.column = column

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.message, self.position, self.excerpt, self.line, self.column), self.__dict__ or None


class SchemaValidationError(ValueError):
    """A value does not satisfy its JSON Schema (raised by ``SchemaValidator.validate``/``validate_json``).

    Attributes:
        message: ``'<pointer>: <reason>'`` per failure, joined by ``'; '`` (``/`` is the whole value).
        errors: One dict per failure: ``pointer`` (JSON pointer, RFC 6901, into the value; ``''`` is
            the whole value), ``keyword`` (the schema keyword that failed) and ``message``.
    """

    __slots__ = ('errors', 'message')  # built for every invalid tool call: no per-instance dict

    def __init__(self, message: str, errors: list[dict[str, str]] | None = None) -> None:
        self.args = (message,)  # what BaseException.__init__(message) sets, without the call
        self.message = message
        self.errors: list[dict[str, str]] = list(errors or [])

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.message, self.errors), self.__dict__ or None


class StreamFormatError(ValueError):
    """A stream event's data is not a JSON object (the ``StreamAggregator`` stays usable).

    Attributes:
        message: The full message.
        event: 1-based number of the offending SSE event in the stream.
        excerpt: The first 60 characters of its data.
        chunks: What the failing call delivered anyway: the chunk dicts (``feed()``/``finish()``),
            the ``(text, reasoning)`` deltas (``feed_deltas()``) or ``[(text, reasoning)]``
            (``feed_text()``, empty when nothing was added).
    """

    def __init__(self, message: str, event: int = 0, excerpt: str = '') -> None:
        super().__init__(message)
        self.message = message
        self.event = event
        self.excerpt = excerpt
        self.chunks: list[Any] = []

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.message, self.event, self.excerpt), self.__dict__ or None


# --- providers (toolweave.providers) -------------------------------------------------------------


class ProviderError(RuntimeError):
    """A chat model request failed; the base of every provider error (``ChatModelError`` is the same class).

    The hierarchy (catch the base, or one subclass)::

        ProviderError (RuntimeError)        also spelled ChatModelError
        +-- AuthenticationError             HTTP 401 / 403: missing, wrong or unauthorised API key
        +-- RateLimitError                  HTTP 429 after the retries ran out (``retry_after`` seconds)
        +-- ContextLengthError              HTTP 400 / 413 / 422 whose message says the input is too long
        +-- BadRequestError                 any other HTTP 4xx
        +-- ServerError                     HTTP 5xx (Anthropic 529 overloaded too) after the retries ran out
        +-- ProviderRedirectError           HTTP 3xx: the endpoint moved (``location``); redirects are not followed
        +-- ProviderTimeoutError            connect, read or total timeout
        +-- ProviderConnectionError         cannot connect, or the connection broke before the answer began
        +-- ResponseFormatError             a body or stream event that is not the JSON the provider documents
        +-- ResponseTooLargeError           a body longer than the model's ``max_response_bytes``
        +-- IncompleteStreamError           the stream stopped early: connection closed, no end marker
        +-- ProviderStreamError             the provider reported an error inside a 200 stream

    API keys never appear in the message, ``body``, ``repr``, any attribute or the ``__cause__``/``__context__``
    chain: the HTTP layer replaces every form of them (escaped, encoded, cut short) by ``***`` and does not
    chain the httpx exceptions (which hold the request and its headers).

    Attributes:
        message: The readable message (also ``str(error)``).
        status_code: The HTTP status, when the server answered.
        body: The first 500 characters of the response body, when there was one.
        provider_message: The provider's own error message, when the body or stream carried one.
        request_id: The provider's request id (``x-request-id``, ``request-id`` headers), when sent.
        provider: ``'openai'``, ``'anthropic'``, ``'gemini'``, ``'ollama'``, ``'openai-responses'`` or ``None``.
        partial_text: Text already delivered to the application before a stream failed (``''`` otherwise).
        retry_after: Seconds the provider asked to wait (``Retry-After``/``retry-after-ms``), or ``None``.
    """

    retry_after: float | None = None

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        body: str | None = None,
        provider_message: str | None = None,
        request_id: str | None = None,
        provider: str | None = None,
        partial_text: str = '',
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code
        self.body = body
        self.provider_message = provider_message
        self.request_id = request_id
        self.provider = provider
        self.partial_text = partial_text

    def __reduce__(self) -> tuple[Any, ...]:
        return _rebuild_provider_error, (type(self), self.message, dict(self.__dict__))


def _rebuild_provider_error(cls: type[ProviderError], message: str, state: dict[str, Any]) -> ProviderError:
    error = cls.__new__(cls)
    RuntimeError.__init__(error, message)
    error.__dict__.update(state)
    return error


ChatModelError = ProviderError
"""The name providers used before the typed hierarchy; the same class as :class:`ProviderError`."""


class AuthenticationError(ProviderError):
    """HTTP 401 or 403: the API key is missing, wrong, or may not use this model."""


class RateLimitError(ProviderError):
    """HTTP 429 after the retries ran out (``retry_after``: the wait the provider asked for, if any)."""


class ContextLengthError(ProviderError):
    """The prompt (plus ``max_tokens``) does not fit the model's context window."""


class BadRequestError(ProviderError):
    """Any other HTTP 4xx: the provider rejected the request (unknown model, invalid schema, ...)."""


class ServerError(ProviderError):
    """HTTP 5xx (and Anthropic's 529 "overloaded") after the retries ran out."""


class ProviderRedirectError(ProviderError):
    """HTTP 3xx: the server points elsewhere; toolweave does not follow redirects (a moved ``base_url``).

    Attributes:
        location: The ``Location`` header (secrets redacted), or ``None`` when the server sent none.
    """

    location: str | None = None


class ProviderTimeoutError(ProviderError):
    """No answer within the connect, read or total timeout."""


class ProviderConnectionError(ProviderError):
    """The server cannot be reached, or the connection broke before the answer began."""


class ResponseFormatError(ProviderError):
    """A response body or stream event is not the JSON the provider documents (cause: ``StreamFormatError``)."""


class ResponseTooLargeError(ProviderError):
    """The answer (or an error body) is longer than ``max_response_bytes``; reading stopped at the limit.

    Attributes:
        limit: The limit in bytes.
    """

    limit: int | None = None


class IncompleteStreamError(ProviderError):
    """The stream stopped before its end marker: the connection closed or the server stopped sending."""


class ProviderStreamError(ProviderError):
    """The provider reported an error inside the stream (an ``event: error`` frame or an ``error`` payload).

    Raised by the Rust core's ``StreamAggregator`` (and its twin) with ``(message, error)`` and re-raised
    by the providers with the HTTP fields filled in. A :class:`ProviderError`, hence a ``RuntimeError``.

    Attributes:
        message: The provider's message (the core) or a readable message naming the URL (providers).
        error: ``{'event': str, 'message': str, 'data': payload or its text}``, or ``None``.
        chunks: What the failing call delivered anyway: the chunk dicts (``feed()``/``finish()``),
            the ``(text, reasoning)`` deltas (``feed_deltas()``) or ``[(text, reasoning)]``
            (``feed_text()``, empty when nothing was added).
    """

    def __init__(self, message: str, error: dict[str, Any] | None = None, **fields: Any) -> None:
        super().__init__(message, **fields)
        self.error = error
        self.chunks: list[Any] = []


class InvalidApiKeyError(ValueError):
    """An API key (or a secret header value) that cannot be sent: a control or non-ASCII character.

    Raised when a model is built. The message gives the position of the first bad character and never
    the key itself.
    """


class MissingApiKeyError(ValueError):
    """A model built without the API key its provider needs (no ``api_key``, its environment variables unset).

    Raised when the model is built, before any request (which would go out without authentication).
    ``api_key=''`` means "no key" for a server that needs none (a local OpenAI-compatible server).
    """


class LocalModelError(RuntimeError):
    """The embedded local model cannot run: ``xllamacpp`` or the model package missing, or the server failed to start."""


# --- tools (toolweave.tools) ---------------------------------------------------------------------


def _cause_message(cause: BaseException) -> str:
    try:
        text = str(cause)
    except Exception:  # noqa: BLE001 - an exception whose __str__ itself fails still needs a message
        return f'{type(cause).__name__} (its message could not be rendered)'
    return f'KeyError: {text}' if isinstance(cause, KeyError) else text


class ToolExecutionError(RuntimeError):
    """A tool failed: bad arguments, or the function raised (as Spring AI's ``ToolExecutionException``).

    The manager's exception processor turns it into text for the model unless told to rethrow. The
    message is the cause's; a ``KeyError`` (whose text is only the quoted key) reads ``KeyError: 'key'``.

    Attributes:
        tool_definition: The tool that failed.
        cause: The underlying exception (also ``__cause__``).
    """

    __slots__ = ('cause', 'tool_definition')  # built for every failed tool call: no per-instance dict

    def __init__(self, tool_definition: ToolDefinition, cause: BaseException, message: str | None = None) -> None:
        self.args = (message if message is not None else _cause_message(cause),)  # as RuntimeError.__init__(text)
        self.tool_definition = tool_definition
        self.cause = cause
        self.__cause__ = cause

    def __reduce__(self) -> tuple[Any, ...]:
        # pickle/copy rebuild from the three arguments (the default gives ``args``, the message only); the
        # instance dict (``add_note`` notes, attributes set later) rides along as the default reduce carries it
        return type(self), (self.tool_definition, self.cause, self.args[0]), self.__dict__ or None


class ToolCallLimitExceededError(RuntimeError):
    """A tool-call limit of this turn was breached with ``ToolCallLimitBehavior.THROW``.

    Spring's ``ToolCallLimitExceededException``.

    The message is Spring's: ``Tool call limit (N) exceeded for tool 'x'`` for a per-tool limit,
    ``Total tool call limit (N) exceeded for this turn`` for the total one.

    Args:
        tool_name: The tool whose per-tool limit was breached; ``None`` when the total limit was.
        limit: The limit that was breached.
        conversation_history: The turn up to the breach: the prompt's messages, the assistant message
            with its tool calls, and a ``ToolResponseMessage`` with the responses of the calls that ran
            before the breach followed by the breach text as the breaching call's response.

    Attributes:
        tool_name: As above.
        limit: As above.
        conversation_history: As above (a tuple).
        partial_responses: The responses of the calls of this batch that ran before the breach.
        breach_text: The text answered to the breaching call (``Tool call limit (N) exceeded for tool
            'x'. No further calls to this tool are allowed in this turn.``), else the message.
    """

    FINISH_REASON = 'toolCallLimitExceeded'
    """Finish reason of the generation :meth:`build_generation` makes."""
    METADATA_PARTIAL_TOOL_RESPONSES = 'partialToolResponses'
    """Metadata key of that generation holding :attr:`partial_responses`."""

    def __init__(self, tool_name: str | None, limit: int, conversation_history: Sequence[Message] = ()) -> None:
        if tool_name is None:
            message = f'Total tool call limit ({limit}) exceeded for this turn'
        else:
            message = f"Tool call limit ({limit}) exceeded for tool '{tool_name}'"
        super().__init__(message)
        self.tool_name = tool_name
        self.limit = limit
        self.conversation_history = tuple(conversation_history)
        responses = _last_tool_responses(self.conversation_history)
        self.partial_responses: tuple[ToolResponse, ...] = responses[:-1]
        self.breach_text = responses[-1].response_data if responses else message

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.tool_name, self.limit, self.conversation_history), self.__dict__ or None

    def build_generation(self) -> Generation:
        """The one generation a tool loop ends with (Spring ``buildGeneration``).

        Its text is :attr:`breach_text`, its finish reason ``toolCallLimitExceeded``, and the responses
        that completed before the breach are under metadata ``partialToolResponses`` (not as sibling
        generations, so they are not mistaken for alternative answers).
        """
        from toolweave.chat.messages import AssistantMessage
        from toolweave.chat.response import Generation

        metadata = {self.METADATA_PARTIAL_TOOL_RESPONSES: self.partial_responses}
        return Generation(AssistantMessage(self.breach_text), self.FINISH_REASON, metadata)


def _last_tool_responses(history: Sequence[Message]) -> tuple[ToolResponse, ...]:
    from toolweave.chat.messages import ToolResponseMessage

    last = history[-1] if history else None
    return tuple(last.responses) if isinstance(last, ToolResponseMessage) else ()


class InvalidToolArgumentsError(ValueError):
    """The model's arguments for a tool are invalid: not a JSON object, or failing the tool's schema.

    It is the ``cause`` of the ``ToolExecutionError`` the callback raises; the message (``Invalid
    arguments for tool '<name>': <field>: <reason>; ...``) goes back to the model as the tool response.

    Attributes:
        tool_name: The tool.
        problems: One entry per failing field, ``'<field path>: <reason>'``.
    """

    __slots__ = ('message', 'problems', 'tool_name')  # built for every invalid tool call: no per-instance dict

    def __init__(self, tool_name: str, problems: Sequence[str]) -> None:
        self.tool_name = tool_name
        self.problems = tuple(problems)
        self.message = f"Invalid arguments for tool '{tool_name}': " + '; '.join(self.problems)
        self.args = (self.message,)  # what BaseException.__init__(message) sets, without the call

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.tool_name, self.problems), self.__dict__ or None


class ToolRetryBudgetExceededError(RuntimeError):
    """The model kept sending invalid arguments to a tool past its ``max_retries`` budget in one turn.

    Raised by the ``ToolCallingManager`` (it ends the run: the model is not asked again).

    Attributes:
        tool_name: The tool.
        max_retries: The tool's budget (invalid calls answered with the error text before giving up).
        last_error: The last validation message.
    """

    def __init__(self, tool_name: str, max_retries: int, last_error: str) -> None:
        self.tool_name = tool_name
        self.max_retries = max_retries
        self.last_error = last_error
        super().__init__(
            f"The model sent invalid arguments to tool '{tool_name}' {max_retries + 1} times in this turn "
            f'(max_retries={max_retries}); giving up. Last error: {last_error}'
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.tool_name, self.max_retries, self.last_error), self.__dict__ or None
