"""Lazy package exports (issue #14): every public name resolves, type checkers see the same names, nothing heavy is eager."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGES = [
    'toolweave',
    'toolweave.advisors',
    'toolweave.memory',
    'toolweave.providers',
    'toolweave.runstate',
    'toolweave.search',
    'toolweave.tools',
]


def type_checking_imports(package: str) -> dict[str, str]:
    """Name -> module of the ``if TYPE_CHECKING:`` imports of ``package``'s ``__init__.py``."""
    source = Path(importlib.import_module(package).__file__ or '').read_text()
    names: dict[str, str] = {}
    for node in ast.parse(source).body:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == 'TYPE_CHECKING':
            for statement in node.body:
                if isinstance(statement, ast.ImportFrom):
                    names.update({alias.name: statement.module or '' for alias in statement.names})
    return names


@pytest.mark.parametrize('package', PACKAGES)
def test_every_exported_name_resolves_to_the_object_its_module_defines(package: str) -> None:
    module = importlib.import_module(package)
    seen = type_checking_imports(package)
    exported = [name for name in module.__all__ if name != '__version__']
    assert exported, package
    assert sorted(seen) == sorted(exported)  # what mypy sees is what __all__ promises
    for name in exported:
        assert getattr(module, name) is getattr(importlib.import_module(seen[name]), name), name
        assert name in dir(module)


@pytest.mark.parametrize('package', PACKAGES)
def test_an_unknown_name_is_an_attribute_error(package: str) -> None:
    module = importlib.import_module(package)
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'NoSuchName'"):
        module.NoSuchName  # noqa: B018
    with pytest.raises(ImportError, match=f"^cannot import name 'NoSuchName' from '{package}' "):
        exec(f'from {package} import NoSuchName', {})  # noqa: S102 - the statement users write


def test_version_is_the_installed_distributions() -> None:
    from importlib.metadata import version

    import toolweave

    assert toolweave.__version__ == version('toolweave')


def modules_after(statement: str) -> set[str]:
    code = f'import sys; {statement}; print("\\n".join(sys.modules))'
    out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, check=True, timeout=60)
    return set(out.stdout.split())


def test_import_toolweave_imports_no_submodule_and_no_heavy_dependency() -> None:
    loaded = modules_after('import toolweave')
    assert {'toolweave', 'toolweave._lazy'} <= loaded
    heavy = {'pydantic', 'httpx', 'asyncio', 'importlib.metadata', 'toolweave.client', 'toolweave.tools', 'orjson'}
    assert heavy & loaded == set()


def test_chat_client_and_tool_do_not_import_providers_memory_backends_or_search() -> None:
    loaded = modules_after('from toolweave import ChatClient, tool')
    assert {'toolweave.client', 'toolweave.tools.decorator'} <= loaded
    unused = {
        'httpx',
        'toolweave.providers.openai',
        'toolweave.providers.local',
        'toolweave.memory.redis',
        'toolweave.memory.sqlite',
        'toolweave.runstate.redis',
        'toolweave.search.vector',
        'toolweave.tools.augment',
        'sqlite3',
    }
    assert unused & loaded == set()


def test_production_code_never_imports_the_pure_python_twins() -> None:
    """Only the backend switch (``_native``) picks the twins; everything else goes through it (issue #19)."""
    package = Path(importlib.import_module('toolweave').__file__ or '').parent
    offenders = []
    for path in package.rglob('*.py'):
        relative = path.relative_to(package).as_posix()
        if relative.startswith('_reference/') or relative == '_native.py':
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = [node.module or ''] if isinstance(node, ast.ImportFrom) else []
            names += [alias.name for alias in node.names] if isinstance(node, ast.Import) else []
            offenders += [f'{relative}: {name}' for name in names if name.startswith('toolweave._reference')]
    assert offenders == []
