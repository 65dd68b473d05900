"""Overlay file bytes in the memory budget (fs/databudget.py, fs/sparse.py): ENOSPC as a full
tmpfs, nothing already written lost, holes free, cut or freed data given back, EFBIG past
s_maxbytes."""
import gc

from hypothesis import given, strategies as st

from kernel_model import errno as E
from kernel_model.errno import GuestErrno
from kernel_model.fs import FileSystem, O_CREAT, O_RDONLY, O_RDWR
from kernel_model.fs.constants import MAX_LFS_FILESIZE
from kernel_model.fs.databudget import DataBudget
from kernel_model.fs.sparse import CHUNK, PAGE, SparseData

from .helpers import PROC, errno_of

LIMIT = 64 * PAGE


def limited(fs: FileSystem, limit: int) -> FileSystem:
    fs.data_budget.allows = lambda extra: fs.data_budget.used + extra <= limit
    return fs


def test_writes_past_the_budget_are_enospc_and_keep_what_was_written(fs):
    limited(fs, LIMIT)
    f = fs.open(b"/tmp-file", O_RDWR | O_CREAT, 0o644, b"/", PROC)
    chunk = bytes(range(256)) * 64                        # 16 KiB of a pattern
    written = 0
    while True:
        try:
            n = f.write(chunk)
        except GuestErrno as exc:
            assert exc.errno == E.ENOSPC
            break
        assert n > 0
        written += n
    assert written == LIMIT                               # pages to the last one
    assert f.pread(written, 0) == (chunk * (written // len(chunk) + 1))[:written]
    assert fs.stat(b"/tmp-file", b"/", PROC).size == written
    assert errno_of(fs.mkdir, b"/d", 0o755, b"/", PROC) is None     # names cost no data


def test_a_write_that_half_fits_is_short(fs):
    limited(fs, LIMIT)
    f = fs.open(b"/f", O_RDWR | O_CREAT, 0o644, b"/", PROC)
    f.write(bytes(LIMIT - CHUNK))
    assert f.write(b"x" * (2 * CHUNK)) == CHUNK           # what fit, chunk by chunk
    assert errno_of(f.write, b"y") == E.ENOSPC
    assert f.pread(4, LIMIT - 2) == b"xx"


def test_holes_cost_nothing_and_freed_data_comes_back(fs):
    limited(fs, LIMIT)
    f = fs.open(b"/f", O_RDWR | O_CREAT, 0o644, b"/", PROC)
    f.truncate(1 << 40)
    f.pwrite(b"z", (1 << 39))
    assert fs.data_budget.used == PAGE
    f.truncate(0)
    assert fs.data_budget.used == 0
    f.write(bytes(LIMIT))
    assert errno_of(f.write, b"more") == E.ENOSPC
    f.close()
    fs.unlink(b"/f", b"/", PROC)
    del f
    gc.collect()
    assert fs.data_budget.used == 0                       # the inode is gone with its pages


def test_copy_up_that_does_not_fit_changes_nothing(fs):
    limited(fs, 100)                                      # less than /usr/lib/libc.so (4000)
    f = fs.open(b"/usr/lib/libc.so", O_RDWR, 0, b"/", PROC)
    assert errno_of(f.pwrite, b"X", 0) == E.ENOSPC
    assert f.pread(4, 0) == b"libc" and fs.data_budget.used == 0


def test_past_the_largest_file_is_efbig(fs):
    f = fs.open(b"/f", O_RDWR | O_CREAT, 0o644, b"/", PROC)
    assert errno_of(f.pwrite, b"x", MAX_LFS_FILESIZE) == E.EFBIG
    assert f.pwrite(b"xy", MAX_LFS_FILESIZE - 1) == 1      # what fits below s_maxbytes
    assert errno_of(fs.truncate, b"/f", MAX_LFS_FILESIZE + 1, b"/", PROC) == E.EFBIG
    assert fs.open(b"/f", O_RDONLY, 0, b"/", PROC).stat().size == MAX_LFS_FILESIZE


steps = st.lists(st.one_of(
    st.tuples(st.just("write"), st.integers(0, 5 * CHUNK), st.integers(1, 3 * CHUNK)),
    st.tuples(st.just("truncate"), st.integers(0, 6 * CHUNK)),
), max_size=12)


@given(steps, st.integers(0, 3 * CHUNK))
def test_budget_matches_the_pages_held_and_never_overflows(ops, limit):
    budget = DataBudget()
    budget.allows = lambda extra: budget.used + extra <= limit
    data, model = SparseData(budget=budget), bytearray()
    for i, op in enumerate(ops):
        if op[0] == "write":
            offset, payload = op[1], bytes([i + 1]) * op[2]
            try:
                done = data.write(offset, payload)
            except GuestErrno as exc:
                assert exc.errno == E.ENOSPC
                done = 0
            if done:
                model.extend(bytes(max(0, offset + done - len(model))))
                model[offset:offset + done] = payload[:done]
        else:
            data.truncate(op[1])
            del model[op[1]:]
            model.extend(bytes(op[1] - len(model)))
        held = sum((len(c) + PAGE - 1) // PAGE * PAGE for c in data._chunks.values())
        assert budget.used == data.cost == held <= max(limit, 0)
        assert data.read(0, len(model) + 1) == bytes(model)
    del data
    assert budget.used == 0


def test_st_blocks_counts_the_pages_held(fs):
    """As tmpfs's i_blocks: a hole has none, each page written counts (512-byte units)."""
    f = fs.open(b"/sparse", O_RDWR | O_CREAT, 0o644, b"/", PROC)
    f.truncate(1 << 40)
    assert f.stat().blocks == 0 and f.stat().size == 1 << 40
    f.pwrite(b"z", 1 << 39)
    assert f.stat().blocks == PAGE // 512
    f.pwrite(bytes(5000), 0)
    assert f.stat().blocks == 3 * PAGE // 512
