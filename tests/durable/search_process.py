"""One process serving one request of a tool-search conversation: ``search_process.py <store> <where> <conversation> [query]``.

``store`` is ``sqlite`` (``where``: the file) or ``redis`` (``where``: the URL). With a ``query`` the model
searches for it in round 1; without, it answers at once. Prints JSON: the tools offered in round 1 and
the conversation's discovered tools as this process's store reads them.
"""

from __future__ import annotations

import json
import sys

from toolweave import ChatClient
from toolweave.advisors import ToolSearchToolCallingAdvisor
from toolweave.chat.messages import AssistantMessage, ToolCall, ToolResponseMessage
from toolweave.chat.options import ToolCallingChatOptions
from toolweave.chat.response import ChatResponse, Generation
from toolweave.providers import ScriptedChatModel
from toolweave.search import RegexToolIndex
from toolweave.search.sessions import RedisDiscoveredToolsStore, SqliteDiscoveredToolsStore, ToolSearchSessions
from toolweave.tools import tool


@tool
def get_weather(city: str) -> str:
    """Weather of a city."""
    return 'sunny'


@tool
def get_time(city: str) -> str:
    """Local time of a city."""
    return '12:00'


@tool
def send_mail(to: str) -> str:
    """Send a mail."""
    return 'sent'


def main(kind: str, where: str, conversation: str, query: str | None) -> None:
    store = SqliteDiscoveredToolsStore(where) if kind == 'sqlite' else RedisDiscoveredToolsStore(url=where)
    sessions = ToolSearchSessions(store=store)
    offered: list[list[str]] = []

    def answer(prompt):
        options = prompt.options
        names = (
            [c.tool_definition.name for c in options.tool_callbacks]
            if isinstance(options, ToolCallingChatOptions)
            else []
        )
        offered.append(names)
        searched = any(isinstance(m, ToolResponseMessage) for m in prompt.messages)
        if query and not searched:
            call = ToolCall('s1', 'function', 'toolSearchTool', json.dumps({'query': query}))
            return ChatResponse((Generation(AssistantMessage(None, (call,)), 'tool_calls'),))
        return ChatResponse((Generation(AssistantMessage('done'), 'stop'),))

    model = ScriptedChatModel([answer, answer])
    advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), sessions=sessions)
    client = ChatClient.builder(model).tool_calling_advisor(advisor).build()
    client.prompt('hello').tools(get_weather, get_time, send_mail).advisors(
        chat_memory_conversation_id=conversation
    ).call().content()
    print(json.dumps({'offered': sorted(offered[0]), 'discovered': list(sessions.discovered(conversation))}))


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else None)
