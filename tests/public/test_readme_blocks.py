"""Every ```python block of README.md type-checks under ``mypy --strict`` (one mypy run over all of them).

Each block is written to its own file (``readme_L0075.py``: the README line of its first code line) and
the files are checked together, so a failure names ``README.md:<line>`` of the offending code.

A block that needs more than its own text says so in an HTML comment on the line right before its fence
(invisible on GitHub), ``<!-- readme-test: DIRECTIVE; DIRECTIVE -->``, with these directives:

- ``name NAME``: other blocks may continue this one by ``NAME``.
- ``continues NAME, NAME``: the block runs after the named code, prepended in that order: a named README
  block (with what that block continues itself) or a snippet of :data:`PRELUDES` (for names the README
  leaves to the reader, such as ``my_fifty_tools``).
- ``module NAME``: the block is written as ``NAME.py``, so other blocks can ``import NAME`` (the README's
  multi-file examples).
- ``skip: REASON``: the block is not checked (a reason is required, and shows in the README source).

A directive the test does not know, a marker not right before a ```python fence, or a name nothing defines
fails the test, so a typo cannot silently skip a block.
"""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / 'README.md'
MARKER = re.compile(r'^\s*<!--\s*readme-test:(.*?)-->\s*$')
FENCE = re.compile(r'^(\s*)(```+|~~~+)\s*([^`\s]*)')
# snippets standing for what the README leaves to the reader: name -> code
PRELUDES = {
    'fifty-tools': "my_fifty_tools: list[object] = []  # the reader's own tools\n",
}


@dataclass
class Block:
    """One ```python block: its code lines and the 1-based README line of the first one."""

    line: int
    code: list[str]
    name: str | None = None
    continues: list[str] = field(default_factory=list)
    module: str | None = None
    skip: str | None = None

    @property
    def file_name(self) -> str:
        return f'{self.module}.py' if self.module else f'readme_L{self.line:04d}.py'


def parse_marker(block: Block, text: str, line: int) -> None:
    """Apply a marker's ``;``-separated directives to ``block``; raises ``AssertionError`` naming ``line``."""
    for directive in filter(None, (part.strip() for part in text.split(';'))):
        word, _, rest = directive.partition(' ')
        rest = rest.strip()
        if word == 'name' and rest:
            block.name = rest
        elif word == 'continues' and rest:
            block.continues += [name.strip() for name in rest.split(',')]
        elif word == 'module' and rest.isidentifier():
            block.module = rest
        elif word == 'skip:' and rest:
            block.skip = rest
        else:
            raise AssertionError(f'README.md:{line}: unknown or incomplete readme-test directive {directive!r}')


def readme_blocks(text: str) -> list[Block]:
    """The ```python blocks of ``text`` with the directives of the marker right before each."""
    lines = text.split('\n')
    blocks: list[Block] = []
    number = 0
    while number < len(lines):
        fence = FENCE.match(lines[number])
        if fence is None:
            if MARKER.match(lines[number]) and not lines[number + 1 :][:1] == ['```python']:
                raise AssertionError(f'README.md:{number + 1}: readme-test marker not right before a ```python fence')
            number += 1
            continue
        indent, ticks, info = fence.groups()
        end = number + 1
        while end < len(lines) and not lines[end].strip().startswith(ticks):
            end += 1
        assert end < len(lines), f'README.md:{number + 1}: code block never closed'
        if info in {'py', 'python3', 'py3', 'pycon', 'Python'}:
            raise AssertionError(f'README.md:{number + 1}: tag the block ```python so that it is type-checked')
        if info == 'python':
            block = Block(number + 2, [line.removeprefix(indent) for line in lines[number + 1 : end]])
            marker = MARKER.match(lines[number - 1]) if number else None
            if marker:
                parse_marker(block, marker.group(1), number)
            blocks.append(block)
        number = end + 1
    return blocks


def context(block: Block, named: dict[str, Block], seen: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """The lines put before ``block``'s code, each with where it comes from (``README.md:<line>`` or a prelude)."""
    lines: list[tuple[str, str]] = []
    for name in block.continues:
        assert name not in seen, f'README.md:{block.line}: readme-test continues form a cycle through {name!r}'
        if name in named:
            earlier = named[name]
            lines += context(earlier, named, (*seen, name))
            lines += [(code, f'README.md:{earlier.line + i}') for i, code in enumerate(earlier.code)]
        elif name in PRELUDES:
            lines += [(code, f'prelude {name!r}') for code in PRELUDES[name].splitlines()]
        else:
            raise AssertionError(f'README.md:{block.line}: readme-test continues unknown name {name!r}')
    return lines


def write_files(blocks: list[Block], directory: Path) -> dict[str, list[str]]:
    """Write each checked block (after its context) into ``directory``; file name -> origin of each line."""
    named = {block.name: block for block in blocks if block.name}
    origins: dict[str, list[str]] = {}
    for block in blocks:
        if block.skip:
            continue
        lines = context(block, named)
        lines += [(code, f'README.md:{block.line + i}') for i, code in enumerate(block.code)]
        assert block.file_name not in origins, f'README.md:{block.line}: a second block written as {block.file_name}'
        (directory / block.file_name).write_text('\n'.join(code for code, _ in lines) + '\n', encoding='utf-8')
        origins[block.file_name] = [origin for _, origin in lines]
    return origins


def with_readme_lines(output: str, origins: dict[str, list[str]]) -> str:
    """mypy's ``file.py:N: message`` lines with ``README.md:<line>`` (and the block's first line) put in front."""
    located = []
    for line in output.splitlines():
        hit = re.match(r'^(?:.*[/\\])?([\w.]+\.py):(\d+):(.*)$', line)
        if hit and hit.group(1) in origins:
            where = origins[hit.group(1)][int(hit.group(2)) - 1]
            line = f'{where}:{hit.group(3)}  (in the block checked as {hit.group(1)})'
        located.append(line)
    return '\n'.join(located)


def test_blocks_are_found() -> None:
    text = README.read_text(encoding='utf-8')
    blocks = readme_blocks(text)
    assert len(blocks) == text.count('```python\n') >= 30
    assert all(block.code for block in blocks)


def test_markers_are_parsed() -> None:
    text = '<!-- readme-test: name a -->\n```python\nx = 1\n```\n\n<!-- readme-test: continues a, fifty-tools -->\n```python\nprint(x)\n```\n'
    first, second = readme_blocks(text)
    assert (first.line, first.name, second.line, second.continues) == (3, 'a', 8, ['a', 'fifty-tools'])
    named = {'a': first}
    assert context(second, named) == [
        ('x = 1', 'README.md:3'),
        (PRELUDES['fifty-tools'].rstrip('\n'), "prelude 'fifty-tools'"),
    ]


def test_module_and_skip_markers(tmp_path: Path) -> None:
    text = '<!-- readme-test: module shop -->\n```python\nx = 1\n```\n<!-- readme-test: skip: pseudo-code -->\n```python\n...\n```\n'
    shop, pseudo = readme_blocks(text)
    assert (shop.file_name, pseudo.skip) == ('shop.py', 'pseudo-code')
    assert write_files([shop, pseudo], tmp_path) == {'shop.py': ['README.md:3']}
    assert [path.name for path in tmp_path.iterdir()] == ['shop.py']


def test_bad_markers_fail_naming_the_line() -> None:
    cases = {
        '<!-- readme-test: skip -->\n```python\nx\n```\n': "README.md:1: unknown or incomplete readme-test directive 'skip'",
        '<!-- readme-test: continue a -->\n```python\nx\n```\n': 'README.md:1: unknown or incomplete',
        'text\n<!-- readme-test: name a -->\n\n```python\nx\n```\n': 'README.md:2: readme-test marker not right before',
        '```py\nx\n```\n': 'README.md:1: tag the block ```python',
    }
    for text, message in cases.items():
        try:
            readme_blocks(text)
        except AssertionError as error:
            assert str(error).startswith(message), (text, error)
        else:
            raise AssertionError(f'no error for {text!r}')
    unknown = readme_blocks('<!-- readme-test: continues nothing -->\n```python\nx\n```\n')[0]
    try:
        context(unknown, {})
    except AssertionError as error:
        assert str(error) == "README.md:3: readme-test continues unknown name 'nothing'"
    else:
        raise AssertionError('no error for an unknown name')


def run_mypy(directory: Path, files: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, '-m', 'mypy', '--strict', '--no-incremental', *files],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=directory,
    )


def test_a_failing_block_is_named_by_its_readme_line(tmp_path: Path) -> None:
    blocks = readme_blocks('# title\n\n```python\nx: int = 1\n```\n\n```python\n\ny: str = 2\n```\n')
    origins = write_files(blocks, tmp_path)
    result = run_mypy(tmp_path, sorted(origins))
    assert result.returncode == 1
    report = with_readme_lines(result.stdout, origins)
    assert report.startswith('README.md:9: error: Incompatible types in assignment'), report
    assert report.splitlines()[0].endswith('(in the block checked as readme_L0008.py)'), report


def test_every_python_block_passes_mypy_strict(tmp_path: Path) -> None:
    blocks = readme_blocks(README.read_text(encoding='utf-8'))
    origins = write_files(blocks, tmp_path)
    result = run_mypy(tmp_path, sorted(origins))
    if result.returncode != 0:
        pytest.fail(with_readme_lines(result.stdout + result.stderr, origins), pytrace=False)
    assert f'Success: no issues found in {len(origins)} source files' in result.stdout
