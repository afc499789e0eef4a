"""Tool results that are content: the converter keeps parts, the manager puts them on the ToolResponse."""

from __future__ import annotations

import asyncio

import pytest
from parts import IMAGE, PDF, PNG
from toolweave.chat import (
    AssistantMessage,
    ChatResponse,
    Generation,
    Media,
    Prompt,
    ToolCall,
    ToolCallingChatOptions,
    ToolResponseMessage,
    UserMessage,
)
from toolweave.tools import DefaultToolCallingManager, DefaultToolCallResultConverter, MethodToolCallback, tool
from toolweave.tools.converter import ContentResult


class FakePilImage:
    """What the converter looks for in a Pillow image: a class named Image in a PIL. module with save()."""

    def save(self, fp, format=None):
        assert format == 'PNG'
        fp.write(PNG)


FakePilImage.__name__ = 'Image'
FakePilImage.__module__ = 'PIL.Image'


@pytest.mark.parametrize(
    ('value', 'text', 'media'),
    [
        (PNG, '', (Media('image/png', PNG),)),
        (PDF, '', (Media('application/pdf', PDF),)),
        (b'\x00\x01', '', (Media('application/octet-stream', b'\x00\x01'),)),
        (FakePilImage(), '', (Media('image/png', PNG),)),
        (IMAGE, '', (IMAGE,)),
        (
            ['Chart of sales:', IMAGE, {'total': 3}, PDF],
            'Chart of sales:\n{"total":3}',
            (IMAGE, Media('application/pdf', PDF)),
        ),
    ],
)
def test_converter_keeps_content_as_parts(value, text, media):
    result = DefaultToolCallResultConverter().convert(value)
    assert isinstance(result, ContentResult)
    assert str(result) == text
    assert result.media == media


def test_lists_without_parts_and_nested_bytes_stay_json():
    converter = DefaultToolCallResultConverter()
    assert type(converter.convert(['a', 1])) is str
    assert converter.convert({'raw': b'\x00'}) == '{"raw":"AA=="}'


@tool
def render(title: str) -> list[object]:
    """Render a chart."""
    return [f'chart {title}', Media('image/png', PNG, 'chart.png')]


@tool
async def render_async(title: str) -> bytes:
    """Render a chart (async)."""
    return PNG


def _run(manager, name, asynchronous):
    callbacks = (MethodToolCallback(render), MethodToolCallback(render_async))
    prompt = Prompt((UserMessage('draw'),), ToolCallingChatOptions(tool_callbacks=callbacks))
    call = ToolCall('c1', 'function', name, '{"title": "sales"}')
    chat = ChatResponse((Generation(AssistantMessage(None, (call,)), 'tool_calls'),))
    if asynchronous:
        return asyncio.run(manager.aexecute_tool_calls(prompt, chat))
    return manager.execute_tool_calls(prompt, chat)


@pytest.mark.parametrize('asynchronous', [False, True])
def test_manager_puts_tool_media_on_the_tool_response(asynchronous):
    result = _run(DefaultToolCallingManager(), 'render', asynchronous)
    last = result.conversation_history[-1]
    assert isinstance(last, ToolResponseMessage)
    (response,) = last.responses
    assert response.response_data == 'chart sales'
    assert response.media == (Media('image/png', PNG, 'chart.png'),)
    assert type(response.response_data) is str  # the ContentResult does not leak into history
    result = _run(DefaultToolCallingManager(), 'render_async', asynchronous)
    assert result.conversation_history[-1].responses[0].media == (Media('image/png', PNG),)


def test_media_validation():
    assert Media.from_bytes(PDF).media_type == 'application/pdf'
    assert Media.from_url('https://x.test/a.webp').media_type == 'image/webp'
    assert Media('application/pdf', PDF).kind == 'document'
    assert Media('audio/wav', b'').kind == 'audio'
    assert Media('application/zip', b'').kind == 'file'
    assert Media('image/png', b'\x01').data_url() == 'data:image/png;base64,AQ=='
    with pytest.raises(ValueError, match='media type'):
        Media.from_bytes(b'\x00')
    with pytest.raises(ValueError, match="look like 'image/png'"):
        Media('png', b'')
    with pytest.raises(TypeError, match='bytes or a URL str'):
        Media('image/png', 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match='media must hold Media parts'):
        UserMessage('x', media=(b'raw',))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match='is a URL'):
        Media('image/png', 'https://x.test/a.png').base64()
