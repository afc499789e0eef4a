"""The terminal advisors that call the ``ChatModel`` (Spring AI ``ChatModelCallAdvisor``/``ChatModelStreamAdvisor``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TypeVar

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

_V = TypeVar('_V')


class ChatModelCallAdvisor(CallAdvisor):
    """Calls the model; last on the chain (``LOWEST_PRECEDENCE``); named ``'call'`` as in Spring.

    Raises:
        ValueError: ``model`` is ``None``.
    """

    def __init__(self, model: ChatModel) -> None:
        self.model = _not_none(model, 'model')

    @property
    def name(self) -> str:
        """``'call'``."""
        return 'call'

    @property
    def order(self) -> int:
        """``LOWEST_PRECEDENCE``."""
        return LOWEST_PRECEDENCE

    def advise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """``model.call(request.prompt)``."""
        _not_none(request, 'request')
        return ChatClientResponse(self.model.call(request.prompt), dict(request.context))

    async def aadvise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """``await model.acall(request.prompt)``."""
        _not_none(request, 'request')
        return ChatClientResponse(await self.model.acall(request.prompt), dict(request.context))


class ChatModelStreamAdvisor(StreamAdvisor):
    """Streams from the model; last on the chain (``LOWEST_PRECEDENCE``); named ``'stream'`` as in Spring.

    Raises:
        ValueError: ``model`` is ``None``.
    """

    def __init__(self, model: ChatModel) -> None:
        self.model = _not_none(model, 'model')

    @property
    def name(self) -> str:
        """``'stream'``."""
        return 'stream'

    @property
    def order(self) -> int:
        """``LOWEST_PRECEDENCE``."""
        return LOWEST_PRECEDENCE

    async def advise_stream(
        self, request: ChatClientRequest, chain: StreamAdvisorChain
    ) -> AsyncIterator[ChatClientResponse]:
        """Yield one response per model chunk."""
        _not_none(request, 'request')
        async for chunk in self.model.stream(request.prompt):
            yield ChatClientResponse(chunk, request.context)


def _not_none(value: _V | None, name: str) -> _V:
    """``value``; ``ValueError`` naming ``name`` when it is ``None``."""
    if value is None:
        raise ValueError(f'{name} must not be None')
    return value
