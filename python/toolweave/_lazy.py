"""Lazy package exports: a package's public names are imported on first access (PEP 562 ``__getattr__``).

Why: ``import toolweave`` should not pay for every submodule (pydantic schemas, tool augmentation,
advisors, HTTP providers) before any is used (issue #14: 0.42 s beyond bare Python, most of it never
needed by the program that imported it). Each package lists its exports once, module by module; its
``if TYPE_CHECKING:`` block imports the same names so type checkers and IDEs see them
(``tests/test_lazy_imports.py`` checks the two agree and that every name resolves).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ['exports']


def exports(
    package: str, namespace: dict[str, Any], modules: Mapping[str, tuple[str, ...]]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of ``package`` for the names ``modules`` maps (module -> names).

    A name is imported from its module on first access and stored in ``namespace`` (the package's
    ``globals()``), so later accesses are plain attribute reads.

    Raises:
        AttributeError: (from ``__getattr__``) a name the package does not export.
    """
    where = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f'module {package!r} has no attribute {name!r}')
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *where})

    return __getattr__, __dir__
