"""The ``ChatModel`` protocol every provider implements (Spring AI ``ChatModel``/``StreamingChatModel``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol, runtime_checkable

from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse

__all__ = ['ChatModel']


@runtime_checkable
class ChatModel(Protocol):
    """A model that answers prompts, blocking, async and streaming.

    The model only sends tool *definitions* (from the prompt's ``ToolCallingChatOptions``) and
    returns the tool calls the model asked for; executing them is the ``ToolCallingAdvisor``'s job.

    Streaming contract: each yielded ``ChatResponse`` is one chunk. Text arrives as deltas in
    ``generations[0].output.content``; tool calls arrive **whole**, in one chunk after their last
    fragment (the provider aggregates fragments with the Rust ``StreamAggregator``, as Spring's
    ``OpenAiStreamFunctionCallingHelper`` does); the finish reason and usage arrive on the last
    chunks, usage possibly on a usage-only chunk with no generations.
    """

    def call(self, prompt: Prompt) -> ChatResponse:
        """Send ``prompt`` and block until the whole response is there."""
        ...

    async def acall(self, prompt: Prompt) -> ChatResponse:
        """Send ``prompt`` and await the whole response."""
        ...

    def stream(self, prompt: Prompt) -> AsyncIterator[ChatResponse]:
        """Send ``prompt`` and yield response chunks as they arrive (an async generator)."""
        ...
