"""``MessageChatMemoryAdvisor``: conversation memory on the advisor chain (Spring AI ``MessageChatMemoryAdvisor``).

Before the call it prepends the remembered messages of the conversation (id from the request's
advisor parameter ``chat_memory_conversation_id``, else its default) and stores the request's last
message when it is a user message or tool responses; after the call it stores the answer.

Where it sits decides what it remembers. Outside the tool loop (the default order
``HIGHEST_PRECEDENCE + 200``, below the tool advisor's ``+ 300``) it runs once per request: history
loaded once, only the user message and the final answer stored. Inside the loop (an order above the
tool advisor's) it runs every round and stores every round's messages, tool calls and tool
responses included; the ``ChatClient`` then turns the tool advisor's own history off, since the
memory rebuilds it.

An assistant message that asks for tools is never stored alone: it waits in the request context
until the round that brings its tool responses, and both are stored in one ``add`` (one atomic step
of the repository). When the turn ends before the responses exist (unknown tool, retry budget,
limit breach, provider error, cancellation, a killed process, or no tool loop at all), it is not
stored, so a stored conversation never holds tool calls without their responses.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

from toolweave.advisors.api import (
    HIGHEST_PRECEDENCE,
    CallAdvisor,
    CallAdvisorChain,
    ChatClientRequest,
    ChatClientResponse,
    StreamAdvisor,
    StreamAdvisorChain,
)
from toolweave.chat.messages import AssistantMessage, Message, SystemMessage, ToolResponseMessage, UserMessage
from toolweave.chat.stream import ChatResponseAggregator
from toolweave.memory.base import CONVERSATION_ID, DEFAULT_CONVERSATION_ID, ChatMemory, check_conversation_id
from toolweave.memory.window import repair_tool_calls

__all__ = ['PENDING_TOOL_CALL_KEY', 'BaseChatMemoryAdvisor', 'MessageChatMemoryAdvisor']

PENDING_TOOL_CALL_KEY = 'toolweave.memory.pending_tool_call'
"""Prefix of the request-context key where an assistant tool-call message waits for its responses."""


class BaseChatMemoryAdvisor(CallAdvisor, StreamAdvisor):
    """Marker base of memory advisors: the ``ChatClient`` disables the tool advisor's history when one sits below it."""

    DEFAULT_ORDER = HIGHEST_PRECEDENCE + 200


class MessageChatMemoryAdvisor(BaseChatMemoryAdvisor):
    """Keeps a conversation in a :class:`~toolweave.memory.ChatMemory`.

    Args:
        chat_memory: The memory (e.g. ``MessageWindowChatMemory(SqliteChatMemoryRepository('chat.db'))``).
        order: Chain position (default ``HIGHEST_PRECEDENCE + 200``: outside the tool loop).
        conversation_id: Used when the request has no ``chat_memory_conversation_id`` parameter.

    Raises:
        ValueError: ``chat_memory`` is ``None``, ``conversation_id`` is empty; or, per request, the parameter is empty.
    """

    advisor_params = frozenset({CONVERSATION_ID})

    def __init__(
        self,
        chat_memory: ChatMemory,
        *,
        order: int = BaseChatMemoryAdvisor.DEFAULT_ORDER,
        conversation_id: str = DEFAULT_CONVERSATION_ID,
    ) -> None:
        if chat_memory is None:
            raise ValueError('chat_memory must not be None')
        self.chat_memory = chat_memory
        self._order = order
        self.default_conversation_id = check_conversation_id(conversation_id)
        self._pending_key = f'{PENDING_TOOL_CALL_KEY}:{id(self):x}'

    @property
    def order(self) -> int:
        """Chain position."""
        return self._order

    def conversation_id(self, request: ChatClientRequest) -> str:
        """The request's ``chat_memory_conversation_id`` parameter, else the default."""
        return check_conversation_id(request.context.get(CONVERSATION_ID, self.default_conversation_id))

    def before(self, request: ChatClientRequest, conversation_id: str) -> ChatClientRequest:
        """Prepend the history (system messages of the request first) and store the request's last message.

        Tool responses are stored together with the assistant message that asked for them (waiting
        in the request context since the previous round, or just before them in the request), in one add.
        """
        instructions = request.prompt.messages
        history = self.chat_memory.get(conversation_id)
        systems = [m for m in instructions if isinstance(m, SystemMessage)]
        if systems:
            history = [m for m in history if not isinstance(m, SystemMessage)]
        rest = [m for m in instructions if not isinstance(m, SystemMessage)]
        pending = request.context.pop(self._pending_key, None)
        last = instructions[-1] if instructions else None
        if isinstance(last, UserMessage):
            self.chat_memory.add(conversation_id, [last])
        elif isinstance(last, ToolResponseMessage):
            call = _asking(pending, conversation_id, instructions)
            if call is None:
                self.chat_memory.add(conversation_id, [last])
            else:
                answered, _ = repair_tool_calls([call, last], 'the tool loop returned no response for it')
                self.chat_memory.add(conversation_id, answered)
                if call not in rest:
                    history = [*history, call]
        return request.with_prompt(request.prompt.with_messages([*systems, *history, *rest]))

    def after(
        self, response: ChatClientResponse, conversation_id: str, context: dict[str, Any] | None = None
    ) -> ChatClientResponse:
        """Store the answer's messages (every generation).

        An assistant message with tool calls is kept in ``context`` (the request's; default the
        response's) until :meth:`before` sees its tool responses.
        """
        if response.chat_response is not None:
            messages = [g.output for g in response.chat_response.generations]
            self._store(conversation_id, messages, response.context if context is None else context)
        return response

    def advise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """Load, call, store."""
        conversation_id = self.conversation_id(request)
        response = chain.next_call(self.before(request, conversation_id))
        return self.after(response, conversation_id, request.context)

    async def aadvise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """Async load, call, store (the memory's own calls are blocking and short)."""
        conversation_id = self.conversation_id(request)
        response = await chain.anext_call(self.before(request, conversation_id))
        return self.after(response, conversation_id, request.context)

    async def advise_stream(
        self, request: ChatClientRequest, chain: StreamAdvisorChain
    ) -> AsyncIterator[ChatClientResponse]:
        """Forward every chunk; store the aggregated answer when the stream ends."""
        conversation_id = self.conversation_id(request)
        aggregator = ChatResponseAggregator()
        whole: list[Message] = []
        async for response in chain.next_stream(self.before(request, conversation_id)):
            chat = response.chat_response
            if chat is not None and len(chat.generations) > 1:
                whole.extend(g.output for g in chat.generations)  # return_direct results arrive whole
            elif chat is not None:
                aggregator.add(chat)
            yield response
        result = aggregator.result().result
        streamed = [result.output] if result is not None else []
        self._store(conversation_id, [*streamed, *whole], request.context)

    def _store(self, conversation_id: str, messages: Sequence[Message], context: dict[str, Any]) -> None:
        """Store text answers now; keep the first tool-call message in ``context`` (the others are never executed)."""
        kept = [m for m in messages if not (isinstance(m, AssistantMessage) and not m.content and not m.tool_calls)]
        call = next((m for m in kept if isinstance(m, AssistantMessage) and m.tool_calls), None)
        if call is not None:
            context[self._pending_key] = (conversation_id, call)
        texts = [m for m in kept if not (isinstance(m, AssistantMessage) and m.tool_calls)]
        if texts:
            self.chat_memory.add(conversation_id, texts)


def _asking(pending: object, conversation_id: str, instructions: Sequence[Message]) -> AssistantMessage | None:
    """The assistant message that asked for the tool responses ending ``instructions``, when known."""
    if isinstance(pending, tuple) and len(pending) == 2 and pending[0] == conversation_id:
        call = pending[1]
        if isinstance(call, AssistantMessage):
            return call
    before_last = instructions[-2] if len(instructions) > 1 else None
    if isinstance(before_last, AssistantMessage) and before_last.tool_calls:
        return before_last
    return None
