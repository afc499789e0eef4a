"""Advisor API: requests, responses, the advisor kinds and the chain protocols (Spring AI ``advisor.api``).

An advisor wraps the model call like a middleware: it gets the request and the rest of the chain,
may change the request, calls ``chain.next_call`` (or not), and may change the response. Lower
``order`` runs first (outermost). ``CallAdvisor`` serves the blocking and async paths,
``StreamAdvisor`` the streaming path; :class:`BaseAdvisor` gives all three from ``before``/``after``.
"""

from __future__ import annotations

import abc
from collections.abc import AsyncIterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from toolweave.chat.prompt import Prompt
from toolweave.chat.response import ChatResponse

if TYPE_CHECKING:
    import asyncio

__all__ = [
    'HIGHEST_PRECEDENCE',
    'LOWEST_PRECEDENCE',
    'Advisor',
    'BaseAdvisor',
    'CallAdvisor',
    'CallAdvisorChain',
    'ChatClientRequest',
    'ChatClientResponse',
    'StreamAdvisor',
    'StreamAdvisorChain',
    'UnknownAdvisorParamWarning',
]

HIGHEST_PRECEDENCE = -(2**31)
"""Spring's ``Ordered.HIGHEST_PRECEDENCE``: runs first (outermost)."""
LOWEST_PRECEDENCE = 2**31 - 1
"""Spring's ``Ordered.LOWEST_PRECEDENCE``: runs last (innermost, where the model is called)."""


@dataclass(frozen=True)
class ChatClientRequest:
    """What flows down the chain.

    Attributes:
        prompt: The prompt for the model.
        context: Advisor parameters and shared state (e.g. ``chat_memory_conversation_id``).
    """

    prompt: Prompt
    context: dict[str, Any] = field(default_factory=dict)

    def with_prompt(self, prompt: Prompt) -> ChatClientRequest:
        """The same context with another prompt."""
        if type(self) is ChatClientRequest:  # built directly: a replace() costs 3x, once per round and advisor
            return ChatClientRequest(prompt, self.context)
        return replace(self, prompt=prompt)


@dataclass(frozen=True)
class ChatClientResponse:
    """What flows back up the chain.

    Attributes:
        chat_response: The model response (or stream chunk); ``None`` when an advisor answered without a model.
        context: The request context, possibly extended by advisors.
    """

    chat_response: ChatResponse | None
    context: dict[str, Any] = field(default_factory=dict)

    def with_chat_response(self, chat_response: ChatResponse | None) -> ChatClientResponse:
        """The same context with another model response."""
        if type(self) is ChatClientResponse:  # built directly: a replace() costs 3x
            return ChatClientResponse(chat_response, self.context)
        return replace(self, chat_response=chat_response)


class CallAdvisorChain(Protocol):
    """The rest of the chain, for the blocking and async paths."""

    def next_call(self, request: ChatClientRequest) -> ChatClientResponse:
        """Run the next call advisor (blocking)."""
        ...

    async def anext_call(self, request: ChatClientRequest) -> ChatClientResponse:
        """Run the next call advisor (async)."""
        ...

    def copy(self, after: Advisor) -> CallAdvisorChain:
        """A new chain of the advisors after ``after``: how the tool loop re-enters the chain below itself."""
        ...


class StreamAdvisorChain(Protocol):
    """The rest of the chain, for the streaming path."""

    def next_stream(self, request: ChatClientRequest) -> AsyncIterator[ChatClientResponse]:
        """Run the next stream advisor."""
        ...

    def copy(self, after: Advisor) -> StreamAdvisorChain:
        """A new chain of the advisors after ``after``."""
        ...


class UnknownAdvisorParamWarning(UserWarning):
    """A request carries an advisor parameter that no advisor on its chain declares (see :attr:`Advisor.advisor_params`)."""


class Advisor(abc.ABC):
    """Anything on the chain: a name and an order (lower runs first).

    Attributes:
        advisor_params: The request parameters (``spec.advisors(key=value)``, ``advisor_param(key,
            value)``) this advisor reads from ``request.context``. The chain warns once per key
            (:class:`UnknownAdvisorParamWarning`) when a request carries a parameter that no advisor
            on it declares, e.g. a misspelt ``chat_memory_conversaton_id``. Declare yours as a class
            attribute: ``advisor_params = frozenset({'tenant'})``. Keys starting with
            ``toolweave.`` are the library's own and never warned about.
    """

    advisor_params: ClassVar[frozenset[str]] = frozenset()

    @property
    def name(self) -> str:
        """Name for logs and errors (default: the class name)."""
        return type(self).__name__

    @property
    @abc.abstractmethod
    def order(self) -> int:
        """Position on the chain; lower runs first."""


class CallAdvisor(Advisor):
    """An advisor on the blocking and async paths."""

    @abc.abstractmethod
    def advise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """Handle ``request``, usually by calling ``chain.next_call``."""

    async def aadvise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """Async form; the default runs :meth:`advise_call` in a worker thread, bridging the chain back to the loop."""
        import asyncio  # not at import: `from toolweave import ChatClient` does not load asyncio (issue #14)

        loop = asyncio.get_running_loop()
        return await asyncio.to_thread(self.advise_call, request, _ThreadBridge(chain, loop))


class StreamAdvisor(Advisor):
    """An advisor on the streaming path."""

    @abc.abstractmethod
    def advise_stream(self, request: ChatClientRequest, chain: StreamAdvisorChain) -> AsyncIterator[ChatClientResponse]:
        """Handle ``request``, usually by iterating ``chain.next_stream`` (an async generator)."""


class BaseAdvisor(CallAdvisor, StreamAdvisor):
    """Override :meth:`before` and/or :meth:`after`; all three paths then work (Spring AI ``BaseAdvisor``).

    In streaming, :meth:`after` sees every chunk.

    Args:
        order: Position on the chain; the default 0 sits inside the tool loop (it runs every round).
    """

    def __init__(self, order: int = 0) -> None:
        self._order = order

    @property
    def order(self) -> int:
        """Position on the chain."""
        return self._order

    def before(self, request: ChatClientRequest, chain: Any) -> ChatClientRequest:
        """Change the request on its way down (default: unchanged)."""
        return request

    def after(self, response: ChatClientResponse, chain: Any) -> ChatClientResponse:
        """Change the response on its way up (default: unchanged)."""
        return response

    def advise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """``after(chain.next_call(before(request)))``."""
        return self.after(chain.next_call(self.before(request, chain)), chain)

    async def aadvise_call(self, request: ChatClientRequest, chain: CallAdvisorChain) -> ChatClientResponse:
        """Async ``after(await chain.anext_call(before(request)))``."""
        return self.after(await chain.anext_call(self.before(request, chain)), chain)

    async def advise_stream(
        self, request: ChatClientRequest, chain: StreamAdvisorChain
    ) -> AsyncIterator[ChatClientResponse]:
        """``before`` once, then ``after`` on every chunk."""
        async for response in chain.next_stream(self.before(request, chain)):
            yield self.after(response, chain)


class _ThreadBridge:
    """A blocking view of an async chain, for sync advisors running in a worker thread."""

    def __init__(self, chain: CallAdvisorChain, loop: asyncio.AbstractEventLoop) -> None:
        self._chain = chain
        self._loop = loop

    def next_call(self, request: ChatClientRequest) -> ChatClientResponse:
        import asyncio

        return asyncio.run_coroutine_threadsafe(self._chain.anext_call(request), self._loop).result()

    async def anext_call(self, request: ChatClientRequest) -> ChatClientResponse:
        return await self._chain.anext_call(request)

    def copy(self, after: Advisor) -> CallAdvisorChain:
        return _ThreadBridge(self._chain.copy(after), self._loop)
