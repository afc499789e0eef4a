"""Every content part kind survives every memory store, on user messages and tool responses."""

from __future__ import annotations

import uuid

import pytest
from parts import EVERY_PART, IMAGE, PDF_DOC
from toolweave.chat import Media, ToolResponse, ToolResponseMessage, UserMessage
from toolweave.memory import InMemoryChatMemoryRepository, RedisChatMemoryRepository, SqliteChatMemoryRepository
from toolweave.memory.serialization import dumps, loads, message_to_dict


@pytest.fixture(params=['in_memory', 'sqlite', 'redis'])
def repository(request, tmp_path):
    if request.param == 'in_memory':
        yield InMemoryChatMemoryRepository()
    elif request.param == 'sqlite':
        with SqliteChatMemoryRepository(tmp_path / 'chat.db') as repo:
            yield repo
    else:
        url = request.getfixturevalue('redis_url')
        yield RedisChatMemoryRepository(url=url, key_prefix=f'test:{uuid.uuid4().hex}:')


@pytest.mark.parametrize('kind', sorted(EVERY_PART))
def test_every_part_kind_round_trips_in_user_messages_and_tool_responses(repository, kind):
    part = EVERY_PART[kind]
    messages = [
        UserMessage('look at this', {'n': 1}, (part,)),
        ToolResponseMessage((ToolResponse('c1', 'render', 'rendered:', media=(part, IMAGE)),)),
        ToolResponseMessage((ToolResponse('c2', 'broken', 'failed', True, 'ValueError', (part,)),)),
    ]
    repository.save_all('conv', messages)
    back = repository.find_by_conversation_id('conv')
    assert back == messages
    assert back[0].media[0].data == part.data  # bytes stay bytes, URLs stay str
    assert type(back[0].media[0].data) is type(part.data)


def test_rows_without_parts_keep_their_old_shape_and_old_rows_load():
    assert message_to_dict(UserMessage('hi')) == {'type': 'user', 'text': 'hi', 'metadata': {}}
    old = '{"type":"tool","responses":[{"id":"a","name":"t","response_data":"x"}],"metadata":{}}'
    assert loads(old) == ToolResponseMessage((ToolResponse('a', 't', 'x'),))


def test_stored_form_is_base64_for_bytes_and_a_reference_for_urls():
    stored = message_to_dict(UserMessage('x', media=(PDF_DOC, Media('image/png', 'gs://bucket/a.png'))))
    first, second = stored['media']
    assert first['media_type'] == 'application/pdf' and first['name'] == 'report.pdf' and 'url' not in first
    assert second == {'media_type': 'image/png', 'name': None, 'url': 'gs://bucket/a.png'}
    assert loads(dumps(UserMessage('x', media=(PDF_DOC,)))).media == (PDF_DOC,)


def test_corrupt_stored_part_is_a_value_error():
    bad = '{"type":"user","text":"x","metadata":{},"media":[{"media_type":"image/png","data_b64":"@@"}]}'
    with pytest.raises(ValueError, match='malformed stored message'):
        loads(bad)
