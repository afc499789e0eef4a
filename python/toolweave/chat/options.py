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

__all__ = ['ChatOptions', 'ToolCallingChatOptions']


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
    """

    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    stop: tuple[str, ...] | None = None
    seed: int | None = None
    extra_body: Mapping[str, Any] = field(default_factory=dict)


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
