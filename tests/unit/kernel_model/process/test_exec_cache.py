"""kernel_model/process/exec_cache.py: an exec of an unchanged host file does not read it again,
and whatever changed in between, an exec gets the file's current bytes."""
import os
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernel_model.fs import FileSystem, O_RDONLY, O_RDWR
from kernel_model.process import exec_cache

from ..fs.helpers import PROC

@pytest.fixture(autouse=True)
def fresh_cache():
    exec_cache.forget()
    yield
    exec_cache.forget()


def _exec_read(fs: FileSystem, path: bytes, reads: list) -> bytes:
    """What binprm.read_executable does with the open file, counting the reads."""
    f = fs.open(path, O_RDONLY, 0, b"/", PROC)
    try:
        def read():
            reads.append(path)
            return f.read(1 << 30)
        return exec_cache.read_through(f.node, read)
    finally:
        f.close()


def _program(root: Path, data: bytes) -> Path:
    prog = root / "prog"
    prog.write_bytes(data)
    prog.chmod(0o755)
    return prog


def test_an_unchanged_file_is_read_once_and_shared(tmp_path, monkeypatch):
    monkeypatch.setattr(exec_cache, "RACY_NS", 0)      # the file was just written
    _program(tmp_path, b"\x7fELF" + bytes(5000))
    fs, reads = FileSystem(str(tmp_path), seed=0, clock=lambda: 1), []
    first = _exec_read(fs, b"/prog", reads)
    again = _exec_read(fs, b"/prog", reads)
    assert reads == [b"/prog"] and again is first      # the same object: loader.elf reuses its image


def test_a_file_changed_in_place_with_its_times_put_back_is_read_again(tmp_path, monkeypatch):
    monkeypatch.setattr(exec_cache, "RACY_NS", 0)
    prog = _program(tmp_path, b"A" * 4096)
    fs, reads = FileSystem(str(tmp_path), seed=0, clock=lambda: 1), []
    assert _exec_read(fs, b"/prog", reads) == b"A" * 4096
    before = prog.stat()
    with open(prog, "r+b") as out:                       # same size, same inode, same mtime
        out.write(b"B")
    os.utime(prog, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert prog.stat().st_mtime_ns == before.st_mtime_ns
    assert _exec_read(fs, b"/prog", reads) == b"B" + b"A" * 4095 and len(reads) == 2


def test_a_recently_changed_file_is_not_kept(tmp_path):
    _program(tmp_path, b"C" * 100)                      # ctime now: within RACY_NS
    fs, reads = FileSystem(str(tmp_path), seed=0, clock=lambda: 1), []
    _exec_read(fs, b"/prog", reads)
    _exec_read(fs, b"/prog", reads)
    assert len(reads) == 2


def test_the_guests_overlay_copy_is_never_kept(tmp_path, monkeypatch):
    monkeypatch.setattr(exec_cache, "RACY_NS", 0)
    _program(tmp_path, b"D" * 100)
    fs, reads = FileSystem(str(tmp_path), seed=0, clock=lambda: 1), []
    f = fs.open(b"/prog", O_RDWR, 0, b"/", PROC)
    f.write(b"E")                                        # copied up: the bytes are the guest's
    f.close()
    assert _exec_read(fs, b"/prog", reads) == b"E" + b"D" * 99
    assert _exec_read(fs, b"/prog", reads) == b"E" + b"D" * 99 and len(reads) == 2


def test_memory_is_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(exec_cache, "RACY_NS", 0)
    monkeypatch.setattr(exec_cache, "MAX_BYTES", 10_000)
    fs, reads = FileSystem(str(tmp_path), seed=0, clock=lambda: 1), []
    for i in range(exec_cache.MAX_ENTRIES + 5):
        (tmp_path / f"p{i}").write_bytes(bytes([i]) * 3000)
        _exec_read(fs, f"/p{i}".encode(), reads)
    assert len(exec_cache._kept) == 3                  # 3 x 3000 <= 10 000 < 4 x 3000
    assert sum(len(d) for d in exec_cache._kept.values()) <= 10_000


class CoarseHostFile:
    """A host file as Linux stamps it: times from a coarse clock (one tick: TICK_NS), every write
    stamps mtime and ctime, utime(2) sets mtime only (and stamps ctime)."""
    TICK_NS = 4_000_000

    def __init__(self):
        self.now = 10 ** 18
        self.bytes = bytearray(64)
        self.mtime = self.ctime = self._stamp()
        self.first_stat = os.stat_result((0o100755, 7, 1, 1, 0, 0, 64, 0, 0, 0))

    def _stamp(self) -> int:
        return self.now - self.now % self.TICK_NS

    def can_host_stat(self) -> bool:
        return True

    def host_stat(self):
        return SimpleNamespace(st_dev=1, st_ino=7, st_size=len(self.bytes), st_mtime_ns=self.mtime,
                               st_ctime_ns=self.ctime)

    def write(self, at: int, value: int) -> None:
        self.bytes[at % len(self.bytes)] = value
        self.mtime = self.ctime = self._stamp()

    def utime(self, mtime: int) -> None:
        self.mtime, self.ctime = mtime, self._stamp()


STEPS = st.lists(st.tuples(st.sampled_from(["write", "utime-back", "wait", "long-wait", "exec"]),
                           st.integers(0, 255)), min_size=1, max_size=16)


@settings(max_examples=300, deadline=None)
@given(steps=STEPS)
def test_an_exec_always_gets_the_current_bytes(steps):
    """Whatever happens to the file between execs (writes within one tick of the clock, its
    mtime put back, time passing), an exec gets what the file holds now, and the kept copy
    serves an exec once the file has been left alone long enough."""
    exec_cache.forget()
    host = CoarseHostFile()
    saved_clock, exec_cache.host_now_ns = exec_cache.host_now_ns, lambda: host.now
    reads, served = [], []
    try:
        first_mtime = host.mtime
        for kind, value in steps + [("long-wait", 0), ("exec", 0), ("exec", 0)]:
            if kind == "write":
                host.write(value, value)
            elif kind == "utime-back":
                host.utime(first_mtime)
            elif kind == "wait":
                host.now += value * 100_000                     # 0 to 25 ms: within or past a tick
            elif kind == "long-wait":
                host.now += exec_cache.RACY_NS + host.TICK_NS
            else:
                data = exec_cache.read_through(host, lambda: reads.append(1) or bytes(host.bytes))
                assert data == bytes(host.bytes)
                served.append(data)
        assert len(reads) < len(served)                          # the last exec used the kept copy
    finally:
        exec_cache.host_now_ns = saved_clock
