"""emu/internals/layout_cache.py: a process takes the layout an earlier one located for the same
library only when every field of it is confirmed; anything else is located afresh."""
import dataclasses
import subprocess
import sys
from pathlib import Path

import pytest

import emu.internals as internals
from emu.internals import layout_cache

LOCATED = internals.locate_all()
ROOT = Path(__file__).resolve().parents[4]


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path


def _kept_files(home: Path) -> list[Path]:
    return sorted((home / "trapline" / "unicorn").glob("layout-*.txt"))


def _fail_if_located(monkeypatch):
    def located_again():
        raise AssertionError("located again")
    monkeypatch.setattr(internals, "locate_all", located_again)


def test_a_kept_layout_is_taken_without_locating(cache_home, monkeypatch):
    assert internals.located.__wrapped__() == LOCATED          # none kept: located, then kept
    assert len(_kept_files(cache_home)) == 1
    _fail_if_located(monkeypatch)
    assert internals.located.__wrapped__() == LOCATED


@pytest.mark.parametrize("field", ["emu_counter", "invalid_addr", "cpu_env"])
def test_a_kept_layout_that_is_not_confirmed_is_located_afresh_and_replaced(cache_home, field):
    wrong = {"emu_counter": LOCATED.emu_counter + 8, "invalid_addr": LOCATED.invalid_addr + 8,
             "cpu_env": dataclasses.replace(LOCATED.cpu_env, env_distance=LOCATED.cpu_env.env_distance + 8)}
    layout_cache.store(dataclasses.replace(LOCATED, **{field: wrong[field]}))
    assert layout_cache.load(internals.Layout) != LOCATED
    assert internals.located.__wrapped__() == LOCATED
    assert layout_cache.load(internals.Layout) == LOCATED


@pytest.mark.parametrize("text", ["", "garbage", "1 other-library 1 2 3.11\n1 2 3\n"])
def test_a_malformed_or_foreign_file_is_none(cache_home, text):
    layout_cache.store(LOCATED)
    _kept_files(cache_home)[0].write_text(text)
    assert layout_cache.load(internals.Layout) is None
    assert internals.located.__wrapped__() == LOCATED


def test_an_unwritable_cache_keeps_nothing_and_locates(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("not a folder")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "file"))
    assert internals.located.__wrapped__() == LOCATED
    assert layout_cache.load(internals.Layout) is None


def test_the_next_process_finds_what_the_first_kept(cache_home):
    code = "import emu.internals as i; print(i.located())"
    env = {"XDG_CACHE_HOME": str(cache_home), "PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert len(_kept_files(cache_home)) == 1
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert first.stdout == second.stdout == f"{LOCATED}\n"
