"""Advisor parameters no advisor declares are warned about, once per key (a typo must not go unnoticed)."""

from __future__ import annotations

import asyncio
import uuid
import warnings
from typing import Any

import pytest
from toolweave import ChatClient
from toolweave.advisors import (
    BaseAdvisor,
    ChatClientRequest,
    MessageChatMemoryAdvisor,
    ToolSearchToolCallingAdvisor,
    UnknownAdvisorParamWarning,
)
from toolweave.memory import InMemoryChatMemoryRepository, MessageWindowChatMemory
from toolweave.providers import ScriptedChatModel


def client(*advisors: Any) -> ChatClient:
    model = ScriptedChatModel([ScriptedChatModel.text_response(f'answer {i}') for i in range(10)])
    return ChatClient.builder(model).default_advisors(*advisors).build()


def memory_advisor() -> MessageChatMemoryAdvisor:
    return MessageChatMemoryAdvisor(MessageWindowChatMemory(InMemoryChatMemoryRepository()))


def unknown_warnings(caught: list[warnings.WarningMessage]) -> list[str]:
    return [str(w.message) for w in caught if issubclass(w.category, UnknownAdvisorParamWarning)]


def test_a_misspelt_parameter_is_warned_about_once_with_the_close_match() -> None:
    typo = f'chat_memory_conversaton_id{uuid.uuid4().hex[:6]}'
    chat = client(memory_advisor())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        chat.prompt('hi').advisors(**{typo: 'user-42'}).call()
        chat.prompt('hi again').advisors(**{typo: 'user-42'}).call()
    messages = unknown_warnings(caught)
    assert len(messages) == 1  # once per key, however many requests
    assert f"'{typo}'" in messages[0]
    assert "did you mean 'chat_memory_conversation_id'?" in messages[0]
    assert 'advisor_params' in messages[0]  # says how to declare one


def test_declared_and_internal_parameters_are_not_warned_about() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        client(memory_advisor()).prompt('hi').advisors(chat_memory_conversation_id='u1').call()
        search = ToolSearchToolCallingAdvisor()
        ChatClient.builder(ScriptedChatModel([ScriptedChatModel.text_response('ok')])).tool_calling_advisor(
            search
        ).build().prompt('hi').advisors(chat_memory_conversation_id='u1').call(on_event=lambda e: None)
    assert unknown_warnings(caught) == []


class TenantAdvisor(BaseAdvisor):
    """A user's advisor that declares the parameter it reads."""

    advisor_params = frozenset({'tenant'})

    def __init__(self) -> None:
        super().__init__()
        self.seen: list[Any] = []

    def before(self, request: ChatClientRequest, chain: Any) -> ChatClientRequest:
        self.seen.append(request.context.get('tenant'))
        return request


def test_a_declared_custom_parameter_is_read_without_warning_and_undeclared_ones_warn_everywhere() -> None:
    tenant = TenantAdvisor()
    key = f'tenant_{uuid.uuid4().hex[:6]}'
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter('always')
        client(tenant).prompt('hi').advisors(tenant='acme').call()
        assert tenant.seen == ['acme']
        # without the advisor on the chain, the same key is unknown; in acall() and stream() too
        asyncio.run(client().prompt('hi').advisors(**{key + '_a': 1}).acall())
        client().prompt('hi').advisors(**{key + '_s': 1}).stream().collect()
        client().prompt('hi').advisor_param(key + '_p', 1).call()
    messages = unknown_warnings(caught)
    assert [m.split("'")[1] for m in messages] == [key + '_a', key + '_s', key + '_p']


def test_the_warning_is_an_error_when_asked() -> None:
    key = f'unread_{uuid.uuid4().hex[:6]}'
    with warnings.catch_warnings():
        warnings.simplefilter('error', UnknownAdvisorParamWarning)
        with pytest.raises(UnknownAdvisorParamWarning, match=key):
            client().prompt('hi').advisors(**{key: 1}).call()
