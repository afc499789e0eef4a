"""Pure-Python twin of ``toolweave._core.PartialArguments``: partial arguments as a live value.

The Rust core scans each fragment once and updates its value in place. The twin re-parses the whole
text at every fragment (one-shot ``parse_arguments(text, 'partial')``, quadratic over a stream) and
then updates its live value in place to equal the new one (:func:`update_live`), so values and the
identity of the live objects are the same as the core's:

- the top-level ``dict`` returned by the first successful feed is returned by every later one;
- a container (``dict``/``list``) stays the same object while it stays at its place (its key, or its
  index), and gets its new members in place;
- any other member whose value changed (the string or number still being written) is replaced;
- after a feed that raises, the live value is given up: ``value`` is None and every later feed that
  succeeds (none does for text that only grows: a text that is not a prefix of a JSON object stays
  one) returns a new object, as the core's one-shot path does.

The one difference: a key that appears twice replaces its member in the core (a new container), while
the twin keeps the container at that key and updates it to the new member's value.
"""

from __future__ import annotations

from typing import Any

from toolweave._reference.json import MAX_DEPTH, max_depth_arg, parse_arguments
from toolweave.exceptions import ToolArgumentsError

__all__ = ['LiveArguments', 'PartialArguments', 'update_live']


def update_live(live: Any, new: Any) -> None:
    """Make the container ``live`` equal to ``new`` (a container of the same type) in place.

    Members that are containers of the same type at the same key or index are updated in place
    (recursively); other members are set when they differ in type or value; members ``new`` lacks are
    removed.
    """
    if isinstance(live, dict):
        for key, value in new.items():
            _update_member(live, key, live.get(key, _MISSING), value)
        for key in [k for k in live if k not in new]:
            del live[key]
        return
    for i, value in enumerate(new):
        if i < len(live):
            _update_member(live, i, live[i], value)
        else:
            live.append(value)
    del live[len(new) :]


_MISSING = object()


def _update_member(container: Any, key: Any, old: Any, value: Any) -> None:
    if type(old) is type(value) and isinstance(value, (dict, list)):
        update_live(old, value)
    elif type(old) is not type(value) or old != value:
        container[key] = value


class LiveArguments:
    """The live partial value of one growing argument text, computed one-shot then updated in place."""

    def __init__(self, max_depth: int) -> None:
        self.max_depth = max_depth
        self.text = ''
        self.value: dict[str, Any] | None = None
        self.broken = False

    def parse(self, text: str) -> dict[str, Any]:
        """The live value for ``text`` (a new one when ``text`` does not extend the previous text)."""
        if not text.startswith(self.text):
            self.value, self.broken = None, False
        self.text = text
        try:
            new = parse_arguments(text, 'partial', max_depth=self.max_depth)
        except ToolArgumentsError:
            self.value, self.broken = None, True
            raise
        if self.value is None or self.broken:
            self.value = new
        else:
            update_live(self.value, new)
        return self.value


class PartialArguments:
    """Incremental partial parser of one growing argument text, with a live value.

    Same API, values, errors and live-object identity as ``toolweave._core.PartialArguments`` (see
    the stub for the contract); the twin re-parses the whole text at every fragment.
    """

    def __init__(self, max_depth: int = MAX_DEPTH) -> None:
        self._live = LiveArguments(max_depth_arg('PartialArguments()', max_depth))

    def feed(self, fragment: str) -> dict[str, Any]:
        """Add ``fragment`` to the text; the arguments parsed so far, as the live value."""
        if not isinstance(fragment, str):
            raise TypeError(f'PartialArguments.feed() expects str, got {type(fragment).__name__}')
        return self._live.parse(self._live.text + fragment)

    @property
    def value(self) -> dict[str, Any] | None:
        """The live value (the last ``feed()``'s result), or None."""
        return self._live.value

    @property
    def text(self) -> str:
        """All text fed so far."""
        return self._live.text

    @property
    def max_depth(self) -> int:
        """The ``max_depth`` given to the constructor."""
        return self._live.max_depth
