"""``LexicalToolIndex``: BM25 over names, descriptions and parameter descriptions, CJK-aware.

Scoring is delegated to `bm25s <https://github.com/xhluca/bm25s>`_ (Lucene's BM25 variant,
``k1=1.5``, ``b=0.75``, non-negative IDF); tokens come from :func:`toolweave.search._tokenize.tokenize`
(words for Latin scripts, character unigrams + bigrams for Chinese/Japanese/Korean), so it finds the
tools with Chinese descriptions that :class:`~toolweave.search.RegexToolIndex` (like Spring AI's regex
index) loses. The tool name counts twice, and a query that is exactly a tool's name (case and
separators aside) ranks that tool first.

Needs the ``search`` extra: ``pip install 'toolweave[search]'``.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Iterable
from typing import Any

from toolweave.search._tokenize import tokenize
from toolweave.search.base import (
    DEFAULT_MAX_RESULTS,
    ToolSearchResult,
    check_definition,
    check_max_results,
    check_query,
    exact_name_first,
    parameter_descriptions,
)
from toolweave.tools.definition import ToolDefinition

__all__ = ['LexicalToolIndex']


def _load_bm25s() -> Any:
    try:
        return importlib.import_module('bm25s')
    except ImportError as exc:  # pragma: no cover - the test environment installs the extra
        raise ImportError("LexicalToolIndex needs bm25s: pip install 'toolweave[search]'") from exc


class LexicalToolIndex:
    """Ranks tools by BM25 score of the query against their text.

    Only tools with a positive score are returned; an empty or blank query returns the first
    ``max_results`` tools in indexing order (score 0).

    >>> from toolweave.tools import ToolDefinition
    >>> index = LexicalToolIndex()
    >>> index.index_tools([ToolDefinition('get_weather', '查询指定城市的天气预报'),
    ...                    ToolDefinition('send_mail', '发送电子邮件')])
    >>> [r.name for r in index.search('明天北京天气怎么样')]
    ['get_weather']

    Args:
        k1: BM25 term-frequency saturation.
        b: BM25 length normalisation.

    Raises:
        ImportError: ``bm25s`` is not installed (the ``search`` extra).
    """

    def __init__(self, *, k1: float = 1.5, b: float = 0.75) -> None:
        self._bm25s = _load_bm25s()
        self.k1 = k1
        self.b = b
        self._tools: dict[str, ToolDefinition] = {}
        self._model: Any = None  # rebuilt lazily after a change: (definitions, retriever)
        self._lock = threading.Lock()

    def empty_copy(self) -> LexicalToolIndex:
        """A new, empty index of the same class with the same ``k1`` and ``b``."""
        return type(self)(k1=self.k1, b=self.b)

    def index_tool(self, definition: ToolDefinition) -> None:
        """Add ``definition`` (one of the same name is replaced); the BM25 model is rebuilt on the next search.

        Raises:
            TypeError: ``definition`` is not a ``ToolDefinition``.
        """
        check_definition(definition)
        with self._lock:
            self._tools.pop(definition.name, None)
            self._tools[definition.name] = definition
            self._model = None

    def index_tools(self, definitions: Iterable[ToolDefinition]) -> None:
        """Add each of ``definitions``.

        Raises:
            TypeError: an item is not a ``ToolDefinition`` (the items before it are indexed).
        """
        for definition in definitions:
            self.index_tool(definition)

    def search(self, query: str, max_results: int = DEFAULT_MAX_RESULTS) -> list[ToolSearchResult]:
        """The tools that best match ``query`` by BM25, best first (ties in indexing order).

        Args:
            query: Free text in any language.
            max_results: At most this many results (default 10).

        Returns:
            Matches with a positive BM25 score, and a tool named exactly as the query (first, scored
            1 above the best other match).

        Raises:
            TypeError: ``query`` is not a ``str``.
            ValueError: ``max_results`` < 1.
        """
        check_query(query)
        check_max_results(max_results)
        tokens = tokenize(query)
        with self._lock:
            if not self._tools:
                return []
            if not query.strip():
                return [ToolSearchResult(t.name, t.description, 0.0) for t in list(self._tools.values())[:max_results]]
            if self._model is None:
                self._model = self._build()
            definitions, retriever = self._model
            scores = retriever.get_scores(tokens) if tokens else [0.0] * len(definitions)
        ranked = sorted(
            ((float(score), position) for position, score in enumerate(scores) if score > 0),
            key=lambda item: (-item[0], item[1]),
        )
        top = ranked[0][0] if ranked else 0.0
        ranked = exact_name_first(query, ranked, [d.name for d in definitions], top + 1.0)
        return [
            ToolSearchResult(definitions[i].name, definitions[i].description, score)
            for score, i in ranked[:max_results]
        ]

    def _build(self) -> tuple[list[ToolDefinition], Any]:
        definitions = list(self._tools.values())
        corpus = [_document_tokens(d) for d in definitions]
        retriever = self._bm25s.BM25(k1=self.k1, b=self.b, method='lucene')
        retriever.index(corpus, show_progress=False)
        return definitions, retriever

    def clear(self) -> None:
        """Forget every tool."""
        with self._lock:
            self._tools.clear()
            self._model = None

    def __len__(self) -> int:
        with self._lock:
            return len(self._tools)


def _document_tokens(definition: ToolDefinition) -> list[str]:
    name = tokenize(definition.name)
    text = '\n'.join([definition.description, *parameter_descriptions(definition.input_schema)])
    return [*name, *name, *tokenize(text)]
