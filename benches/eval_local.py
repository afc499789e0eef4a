"""Offline evaluation of ``LocalChatModel`` (``make eval-local``): the README's tools, 3-turn conversations with memory.

Every turn is asked through ``ChatClient`` with a ``MessageChatMemoryAdvisor`` (one conversation id per
conversation, so later turns see the earlier ones) and the run's events recorded. Per turn:

- tool choice: the tools called (``toolSearchTool`` aside) are exactly the expected ones;
- argument validity: every call's arguments were accepted by its tool (no invalid-arguments error);
- argument values: every expected value (case-insensitive) appears in the calls' arguments;
- clean answer: the answer is non-empty, without ``<`` markup or special tokens.

Prints the rates and writes them, with every turn, to ``benches/results/local_eval.md``. Not part of
``make test``: about 10 minutes on two CPU cores. Needs ``pip install 'toolweave[local,search]'``.
"""

from __future__ import annotations

import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel
from toolweave import ChatClient, FunctionToolCallback, ToolParam, tool
from toolweave.advisors import MessageChatMemoryAdvisor, ToolSearchToolCallingAdvisor
from toolweave.events import RunEvent, ToolCallReady, ToolResult
from toolweave.memory import InMemoryChatMemoryRepository, MessageWindowChatMemory
from toolweave.providers import LocalChatModel
from toolweave.providers.local import FALLBACK_KEY
from toolweave.search import RegexToolIndex
from toolweave.tools.callback import ToolCallback

RESULTS = Path(__file__).parent / 'results' / 'local_eval.md'
SEARCH_TOOL = 'toolSearchTool'

# --- the README's tools ------------------------------------------------------------------------------


@tool
def get_weather(city: Annotated[str, ToolParam(description='City name')], unit: Literal['c', 'f'] = 'c') -> str:
    """Current weather of a city."""
    return f'18 degrees {unit.upper()} and sunny in {city}'


class Order(BaseModel):
    item: str
    quantity: int = 1


place_order = (
    FunctionToolCallback.builder('place_order', lambda o: f'{o.quantity} x {o.item}')
    .description('Place an order')
    .input_type(Order)
    .build()
)


@tool
def search(query: str, limit: int | None = None) -> str:
    """Search the documentation."""
    return f'3 pages about {query}: Overview, Examples, Reference'


@tool
def write_file(path: str, text: str) -> str:
    """Write text to a file."""
    return f'wrote {len(text)} characters to {path}'


TOOLS: tuple[ToolCallback, ...] = (get_weather, place_order, search, write_file)  # type: ignore[assignment]

# --- the conversations -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Turn:
    question: str
    tools: tuple[str, ...]
    values: tuple[str, ...] = ()


CONVERSATIONS: dict[str, tuple[Turn, ...]] = {
    'weather follow-ups': (
        Turn('What is the weather in Paris?', ('get_weather',), ('Paris',)),
        Turn('And in Tokyo?', ('get_weather',), ('Tokyo',)),
        Turn('What about Oslo?', ('get_weather',), ('Oslo',)),
    ),
    'orders': (
        Turn('Please order 2 teas.', ('place_order',), ('tea', '2')),
        Turn('Order 3 coffees too.', ('place_order',), ('coffee', '3')),
        Turn('Also order a sandwich.', ('place_order',), ('sandwich',)),
    ),
    'documentation search': (
        Turn('Search the documentation for tool calling limits.', ('search',), ('limits',)),
        Turn('Now search for chat memory.', ('search',), ('memory',)),
        Turn('Search for streaming events.', ('search',), ('streaming',)),
    ),
    'two cities': (
        Turn('Compare the weather in Rome and in Madrid.', ('get_weather',), ('Rome', 'Madrid')),
        Turn('What is the weather in Berlin?', ('get_weather',), ('Berlin',)),
        Turn('And in Lima and Quito?', ('get_weather',), ('Lima', 'Quito')),
    ),
    'mixed tools': (
        Turn('What is the weather in Vienna?', ('get_weather',), ('Vienna',)),
        Turn('Order 4 umbrellas.', ('place_order',), ('umbrella', '4')),
        Turn('Search the documentation for umbrellas.', ('search',), ('umbrella',)),
    ),
    'files': (
        Turn('Write hello world to notes.txt.', ('write_file',), ('notes.txt', 'hello')),
        Turn('Save the text goodbye to bye.txt.', ('write_file',), ('bye.txt', 'goodbye')),
        Turn('What is the weather in Cairo?', ('get_weather',), ('Cairo',)),
    ),
    'tool search': (
        Turn('What is the weather in Madrid?', (SEARCH_TOOL, 'get_weather'), ('Madrid',)),
        Turn('Please order 2 pizzas.', (SEARCH_TOOL, 'place_order'), ('pizza', '2')),
        Turn('What is the weather in Seoul?', ('get_weather',), ('Seoul',)),
    ),
}
"""Conversation name -> turns. Expected tools of a tool-search turn include the search when the tool is new."""

_MARKUP = re.compile(r'<[/a-z_|]+>|<\|')


@dataclass
class Outcome:
    conversation: str
    turn: Turn
    called: list[str] = field(default_factory=list)
    arguments: list[str] = field(default_factory=list)
    errors: int = 0
    answer: str = ''
    fallback: bool = False
    seconds: float = 0.0

    @property
    def choice_ok(self) -> bool:
        wanted = set(self.turn.tools) - {SEARCH_TOOL}
        return set(self.called) - {SEARCH_TOOL} == wanted and (
            SEARCH_TOOL not in self.turn.tools or SEARCH_TOOL in self.called
        )

    @property
    def arguments_ok(self) -> bool:
        return bool(self.called) and self.errors == 0

    @property
    def values_ok(self) -> bool:
        text = ' '.join(self.arguments).lower()
        return all(v.lower() in text for v in self.turn.values)

    @property
    def answer_ok(self) -> bool:
        return bool(self.answer.strip()) and not _MARKUP.search(self.answer)


def run_turn(client: ChatClient, conversation: str, turn: Turn, conversation_id: str) -> Outcome:
    outcome = Outcome(conversation, turn)

    def record(event: RunEvent) -> None:
        if isinstance(event, ToolCallReady):
            outcome.called.append(event.call.name)
            outcome.arguments.append(event.call.arguments)
        elif isinstance(event, ToolResult) and event.is_error:
            outcome.errors += 1

    started = time.monotonic()
    response = (
        client.prompt(turn.question)
        .tools(*TOOLS)
        .advisors(chat_memory_conversation_id=conversation_id)
        .call(on_event=record)
    )
    outcome.seconds = time.monotonic() - started
    chat_response = response.chat_response()
    outcome.answer = chat_response.text
    generation = chat_response.result
    outcome.fallback = bool(generation and generation.metadata.get(FALLBACK_KEY))
    return outcome


def rate(outcomes: list[Outcome], attribute: str) -> float:
    return sum(bool(getattr(o, attribute)) for o in outcomes) / len(outcomes)


def report(outcomes: list[Outcome], seconds: float) -> str:
    rates = {
        'tool choice': rate(outcomes, 'choice_ok'),
        'argument validity': rate(outcomes, 'arguments_ok'),
        'argument values': rate(outcomes, 'values_ok'),
        'clean answer': rate(outcomes, 'answer_ok'),
        'answer replaced by the tool result': rate(outcomes, 'fallback'),
    }
    lines = [
        '# LocalChatModel evaluation (`make eval-local`)',
        '',
        (
            f'{len(outcomes)} questions in {len(CONVERSATIONS)} conversations of 3 turns with chat memory, over the '
            "README's tools (`get_weather`, `place_order`, `search`, `write_file`; one conversation through "
            f'`ToolSearchToolCallingAdvisor`). Gemma 3 270M base, llama.cpp, 1 thread; {seconds:.0f} s in all.'
        ),
        '',
        '| measure | rate |',
        '|---|---|',
        *(
            f'| {name} | {value:.0%} ({round(value * len(outcomes))}/{len(outcomes)}) |'
            for name, value in rates.items()
        ),
        '',
        'Tool choice: the tools called are exactly the expected ones; argument validity: every call was accepted',
        'by its tool; argument values: the expected values appear in the arguments; clean answer: non-empty,',
        'no markup or special tokens.',
        '',
        '| conversation | question | called | arguments | answer | s |',
        '|---|---|---|---|---|---|',
    ]
    for o in outcomes:
        marks = ''.join('x' if not ok else '' for ok in (o.choice_ok, o.arguments_ok, o.values_ok, o.answer_ok))
        answer = o.answer.replace('|', '/') + (' (tool result)' if o.fallback else '')
        lines.append(
            f'| {o.conversation} | {o.turn.question} | {", ".join(o.called)}{" " + marks if marks else ""} '
            f'| {"; ".join(a.replace("|", "/") for a in o.arguments)} | {answer} | {o.seconds:.1f} |'
        )
    return '\n'.join(lines) + '\n'


def main() -> int:
    outcomes: list[Outcome] = []
    started = time.monotonic()
    with LocalChatModel() as model:
        for index, (name, turns) in enumerate(CONVERSATIONS.items()):
            memory = MessageWindowChatMemory(InMemoryChatMemoryRepository(), max_messages=20)
            builder = ChatClient.builder(model).default_advisors(MessageChatMemoryAdvisor(memory))
            if name == 'tool search':
                advisor = ToolSearchToolCallingAdvisor(tool_index=RegexToolIndex(), max_results=2)
                builder = builder.tool_calling_advisor(advisor)
            client = builder.build()
            for turn in turns:
                outcome = run_turn(client, name, turn, f'conversation-{index}')
                outcomes.append(outcome)
                print(
                    f'{name}: {turn.question!r} -> {outcome.called} {outcome.arguments} {outcome.answer!r}', flush=True
                )
    text = report(outcomes, time.monotonic() - started)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(text, encoding='utf-8')
    print(text.split('\n\nTool choice:')[0])
    return 0


if __name__ == '__main__':
    sys.exit(main())
