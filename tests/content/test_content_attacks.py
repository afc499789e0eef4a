"""Attacks on content parts: base64 text passed as a URL, broken data: URLs, malformed media types, wrong names.

Each is refused when the ``Media`` is made (a typed error naming the field), not later as a provider's 400.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from toolweave.chat import Media
from toolweave.chat.messages import UserMessage
from toolweave.memory.serialization import message_from_dict, message_to_dict

PNG = b'\x89PNG\r\n\x1a\n' + b'\x00' * 32


@pytest.mark.parametrize(
    ('data', 'match'),
    [
        (base64.b64encode(PNG).decode(), 'must be a URL'),  # the usual mistake: base64 text instead of bytes
        ('chart.png', 'must be a URL'),
        ('', 'must be a URL'),
        ('data:image/png;base64,!!not base64!!', 'broken base64'),
        ('data:image/png;base64,abc', 'broken base64'),  # bad padding
    ],
)
def test_a_str_that_is_no_usable_url_is_refused(data: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Media('image/png', data)


@pytest.mark.parametrize(
    'media_type', ['image/', '/png', 'image', 'image/png\r\nX-Injected: 1', 'image /png', 'image/png/x', '', ' ']
)
def test_a_malformed_media_type_is_refused(media_type: str) -> None:
    with pytest.raises(ValueError, match='media_type must look like'):
        Media(media_type, PNG)


@pytest.mark.parametrize(('kwargs', 'error'), [({'name': 5}, TypeError), ({'media_type': b'image/png'}, TypeError)])
def test_wrong_types_are_refused(kwargs: dict[str, Any], error: type[Exception]) -> None:
    with pytest.raises(error):
        Media(**{'media_type': 'image/png', 'data': PNG, **kwargs})


def test_valid_urls_and_media_types_are_kept_and_the_type_lowercased() -> None:
    assert Media('IMAGE/PNG', PNG).media_type == 'image/png' and Media('IMAGE/PNG', PNG).kind == 'image'
    for url in ['https://example.com/a.png', 'gs://bucket/a.png', 'data:image/png;base64,aGVsbG8=', 'data:,hello']:
        assert Media('image/png', url).data == url
    assert Media('text/plain; charset=utf-8', 'https://example.com/a.txt').kind == 'text'
    assert Media('application/vnd.openxmlformats-officedocument.wordprocessingml.document', PNG).kind == 'file'


def test_a_large_part_round_trips_through_the_stored_form() -> None:
    big = Media('image/png', PNG * 100_000, 'big.png')  # ~4 MB
    again = message_from_dict(message_to_dict(UserMessage('look', media=(big,))))
    assert isinstance(again, UserMessage) and again.media == (big,)


def test_a_stored_row_with_a_malformed_media_type_is_a_value_error() -> None:
    stored = message_to_dict(UserMessage('look', media=(Media('image/png', PNG),)))
    stored['media'][0]['media_type'] = 'image'
    with pytest.raises(ValueError, match='media_type'):
        message_from_dict(stored)
