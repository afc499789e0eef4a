"""Tokenizer for tool search: English words and CJK character n-grams, no dictionary needed.

Why n-grams: Chinese and Japanese are written without spaces, so a whitespace tokenizer turns a
whole sentence into one token that never matches a differently phrased description. Cutting CJK
runs into single characters and overlapping character pairs (the classic CJK bigram indexing of
Lucene's ``CJKAnalyzer``) lets "查询天气" match "查询指定城市的天气预报" on 查询, 天气, 查, 询, 天, 气
with no segmenter dictionary to ship or load. Latin-script text is split on non-word characters,
camelCase and snake_case, lower-cased, stripped of a few English stop words and of plural endings.
"""

from __future__ import annotations

import re

__all__ = ['tokenize']

_WORD = re.compile(r'[^\W_]+')
_CAMEL = re.compile(r'(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])')
# Han (incl. extension A and compatibility), kana, hangul, the iteration mark.
_CJK_CHARS = '\u3005\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af'
_SPLIT_CJK = re.compile(f'[{_CJK_CHARS}]+|[^{_CJK_CHARS}]+')
_IS_CJK = re.compile(f'[{_CJK_CHARS}]')
_STOP_WORDS = frozenset(
    [
        'a',
        'an',
        'and',
        'are',
        'as',
        'at',
        'be',
        'by',
        'for',
        'from',
        'in',
        'into',
        'is',
        'it',
        'its',
        'of',
        'on',
        'or',
        'that',
        'the',
        'this',
        'to',
        'with',
    ]
)


def _normalise_word(word: str) -> str:
    """Lower-case and strip a plural ending (``queries`` -> ``query``, ``emails`` -> ``email``)."""
    word = word.lower()
    if len(word) > 4 and word.endswith('ies'):
        return word[:-3] + 'y'
    if len(word) > 3 and word.endswith('s') and not word.endswith(('ss', 'us', 'is')):
        return word[:-1]
    return word


def tokenize(text: str) -> list[str]:
    """The search tokens of ``text``, in order.

    >>> tokenize('getWeather: Current weather of cities')
    ['get', 'weather', 'current', 'weather', 'city']
    >>> tokenize('查询天气')
    ['查', '询', '天', '气', '查询', '询天', '天气']
    """
    tokens: list[str] = []
    for run in _WORD.findall(_CAMEL.sub(' ', text)):
        for piece in _SPLIT_CJK.findall(run):
            if _IS_CJK.match(piece):
                tokens.extend(piece)
                tokens.extend(piece[i : i + 2] for i in range(len(piece) - 1))
            else:
                for word in _CAMEL.sub(' ', piece).split():
                    normalised = _normalise_word(word)
                    if normalised not in _STOP_WORDS:
                        tokens.append(normalised)
    return tokens
