"""Every example the README and docs/ show is run, and its output compared (examples.py).

Each console block runs in a fresh folder that holds links to the repository's top-level
entries, so an example reads `samples/bin/...` as a reader in a clone would and writes its
files (`-o prof`) where it cannot change the repository. `trapline` is this checkout's; `$ROOT`
is a Debian 12 userland (amd64), as `python3 tests/e2e/fetch_debian_bins.py` makes one.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from .examples import console_blocks, examples, matches

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
TIMEOUT = 600


def _blocks():
    for page in PAGES:
        by_block = {}
        for example in examples(page):
            by_block.setdefault(_block_of(page, example.line), []).append(example)
        for line, block in sorted(by_block.items()):
            yield pytest.param(block, id=f"{page.relative_to(REPO)}:{line}")


def _block_of(page: Path, line: int) -> int:
    starts = [start for start, _ in console_blocks(page) if start <= line]
    return max(starts)


@pytest.fixture(scope="module")
def shell_env(tmp_path_factory):
    shim = tmp_path_factory.mktemp("bin")
    # this checkout's trapline, named as its console script is (click's usage lines show it)
    (shim / "trapline").write_text(
        f'#!/bin/sh\nexec "{sys.executable}" -c "import sys; from trapline.cli import main; '
        f'sys.argv[0] = \'trapline\'; sys.exit(main())" "$@"\n')
    (shim / "trapline").chmod(0o755)
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTEST")}
    env.update(PATH=f"{shim}:{env.get('PATH', '/usr/bin:/bin')}", PYTHONPATH=str(REPO),
               LC_ALL="C.UTF-8", COLUMNS="100", TERM="dumb")
    env.pop("NO_COLOR", None)
    env["ROOT"] = str(_debian_root())
    return env


def _debian_root() -> Path:
    from tests.e2e.debian_rootfs import ensure_debian_rootfs     # the e2e fixtures' own fetcher
    return Path(ensure_debian_rootfs()["amd64"])


@pytest.fixture
def example_folder():
    """A fresh folder whose path has the same length on every run: the guest's environment holds
    PWD and its stack the program's path, whose lengths move the stack, and strace lines show
    stack addresses."""
    folder = Path(tempfile.mkdtemp(prefix="trapline-docs-", dir="/tmp"))
    for entry in REPO.iterdir():
        if entry.name not in (".git",):
            (folder / entry.name).symlink_to(entry)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.mark.e2e
@pytest.mark.parametrize("block", list(_blocks()))
def test_example_shows_what_it_prints(block, shell_env, example_folder):
    for example in block:
        done = subprocess.run(["bash", "-c", example.command], cwd=example_folder, env=shell_env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=TIMEOUT)
        where = f"{example.path.relative_to(REPO)}:{example.line}: $ {example.command}"
        if example.expected.strip() == "":
            assert done.returncode == 0, f"{where}\nexit {done.returncode}\n{done.stdout}"
        assert matches(example.expected, done.stdout), (
            f"{where}\n--- shown\n{example.expected}\n--- printed (exit {done.returncode})\n{done.stdout}")
