"""The terminal advisors that call the ``ChatModel`` (Spring AI ``ChatModelCallAdvisor``/``ChatModelStreamAdvisor``)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from toolweave.advisors.api import (
    LOWEST_PRECEDENCE,
    CallAdvisor,
    CallAdvisorChain,
    ChatClientRequest,
    ChatClientResponse,
    StreamAdvisor,
    StreamAdvisorChain,
)
from toolweave.chat.model import ChatModel

__all__ = ['ChatModelCallAdvisor', 'ChatModelStreamAdvisor']


class ChatModelCallAdvisor(CallAdvisor):
    """Calls the model; last on the chain (``LOWEST_PRECEDENCE``)."""

    def __init__(self, model: ChatModel) -> None:
        self.model = model

    @property
    def order(self) -> int:
        """``LOWEST_PRECEDENCE``."""
        return LOWEST_PRECEDENCE

    def advise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """``model.call(request.prompt)``."""
        return ChatClientResponse(self.model.call(request.prompt), dict(request.context))

    async def aadvise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """``await model.acall(request.prompt)``."""
        return ChatClientResponse(await self.model.acall(request.prompt), dict(request.context))


class ChatModelStreamAdvisor(StreamAdvisor):
    """Streams from the model; last on the chain (``LOWEST_PRECEDENCE``)."""

    def __init__(self, model: ChatModel) -> None:
        self.model = model

    @property
    def order(self) -> int:
        """``LOWEST_PRECEDENCE``."""
        return LOWEST_PRECEDENCE

    async def advise_stream(
        self, request: ChatClientRequest, chain: StreamAdvisorChain
    ) -> AsyncIterator[ChatClientResponse]:
        """Yield one response per model chunk."""
        async for chunk in self.model.stream(request.prompt):
            yield ChatClientResponse(chunk, request.context)
