"""Request options: sampling knobs and, for tool calling, the tools of the request.

As Spring AI's ``ChatOptions`` / ``ToolCallingChatOptions``: the ``ToolCallingAdvisor`` only runs
its loop when the prompt's options are :class:`ToolCallingChatOptions`; any other options pass
straight through to the model.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolweave.tools.callback import ToolCallback

__all__ = ['ChatOptions', 'NativeOutputUnsupportedError', 'OutputSchema', 'ToolCallingChatOptions']

_CALLBACK_TYPES: set[type] = set()
"""Classes already found to satisfy the ``ToolCallback`` protocol (the check is slow; options are built per round)."""


class NativeOutputUnsupportedError(ValueError):
    """A provider has no native JSON-schema output: use the ``'tool'`` or ``'prompted'`` strategy."""

    def __init__(self, provider: str) -> None:
        self.provider = provider
        super().__init__(
            f"{provider} has no native JSON-schema output; use entity(..., strategy='tool') or strategy='prompted'"
        )


@dataclass(frozen=True)
class OutputSchema:
    """A native structured-output request: the answer must be JSON matching ``schema``.

    Each provider sends it in its own form (OpenAI ``response_format`` json_schema in the ``openai-strict``
    dialect, Responses ``text.format``, Gemini ``responseSchema`` in the ``gemini`` dialect, Ollama ``format``,
    llama.cpp ``response_format``); a provider without one raises ``UnsupportedContentError`` rather than
    ignore it. Set by :class:`~toolweave.advisors.structured_output.StructuredOutputAdvisor`.

    Attributes:
        name: A name for the schema (``[a-zA-Z0-9_-]``, as OpenAI asks).
        schema: The JSON Schema (an object at the root).
        strict: Ask for strict schema adherence where the provider has the switch (OpenAI).
    """

    name: str
    schema: Mapping[str, Any]
    strict: bool = True


@dataclass(frozen=True)
class ChatOptions:
    """Model options common to providers; ``None`` means "provider default".

    Attributes:
        model: Model name sent to the provider.
        temperature: Sampling temperature.
        max_tokens: Upper bound on generated tokens per round.
        top_p: Nucleus sampling mass.
        stop: Stop sequences.
        seed: Sampling seed, where the provider supports one.
        extra_body: Provider-specific request fields merged into the request body.
        output_schema: Ask for JSON matching a schema, in the provider's native form (structured output).
    """

    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    stop: tuple[str, ...] | None = None
    seed: int | None = None
    extra_body: Mapping[str, Any] = field(default_factory=dict)
    output_schema: OutputSchema | None = None


@dataclass(frozen=True)
class ToolCallingChatOptions(ChatOptions):
    """Options that carry tools (Spring AI ``ToolCallingChatOptions``).

    Attributes:
        tool_callbacks: The tools of this request; looked up first by the manager.
        tool_names: Names resolved through the manager's resolver (when fallback is enabled).
        tool_context: Side-channel values handed to tools that declare a ``ToolContext``
            parameter; never sent to the model. The manager passes a copy.
        tool_choice: ``'auto'``, ``'required'``, ``'none'`` or a provider-specific object.
        parallel_tool_calls: Whether the model may call several tools in one turn.
    """

    tool_callbacks: tuple[ToolCallback, ...] = ()
    tool_names: frozenset[str] = frozenset()
    tool_context: Mapping[str, Any] = field(default_factory=dict)
    tool_choice: str | Mapping[str, Any] | None = None
    parallel_tool_calls: bool | None = None

    def __post_init__(self) -> None:
        """Check the tools when the options are built, not when the loop first looks one up.

        A list or tuple of callbacks is kept as a tuple; a set or list of names as a frozenset.

        Raises:
            TypeError: an item of ``tool_callbacks`` is not a ``ToolCallback`` (e.g. a plain ``@tool``
                function: wrap it with ``ToolCallbacks.from_(fn)``), or ``tool_names`` is a string or
                holds a non-string.
        """
        from toolweave.tools.callback import ToolCallback  # a cycle: tools import chat

        callbacks = self.tool_callbacks
        if not isinstance(callbacks, (list, tuple)):
            raise TypeError(f'tool_callbacks must be a tuple of ToolCallback, got {type(callbacks).__name__}')
        for index, item in enumerate(callbacks):
            if type(item) in _CALLBACK_TYPES:
                continue
            if isinstance(item, ToolCallback):  # a runtime protocol check (slow): once per class
                _CALLBACK_TYPES.add(type(item))
            else:
                name = getattr(item, '__name__', type(item).__name__)
                raise TypeError(
                    f'tool_callbacks[{index}] ({name!r}) is a {type(item).__name__}, not a ToolCallback: wrap '
                    f'functions and objects with ToolCallbacks.from_(...) or pass them to ChatClient(...).tools()'
                )
        names = self.tool_names
        if isinstance(names, (str, bytes)) or not all(isinstance(n, str) for n in names):
            raise TypeError(f'tool_names must be a set of tool names (str), got {names!r}')
        object.__setattr__(self, 'tool_callbacks', tuple(callbacks))
        object.__setattr__(self, 'tool_names', frozenset(names))
