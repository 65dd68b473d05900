"""sendfile's source must have splice_read (fs/splice.c, reached from do_sendfile): pipes
(pipefifo_fops) and /dev/null (null_fops) have none, so sendfile from them fails with EINVAL
(busybox cat then falls back to read/write, as strace shows); /dev/zero and regular files have
one. With an offset, a pipe fails earlier with ESPIPE (do_sendfile: no FMODE_PREAD). The
sandbox used to copy from both. Checked natively on the reference host (Python's os.sendfile:
pipe and /dev/null EINVAL, /dev/zero and files the bytes)."""
from kernel_model import errno as E

from ...call_script import run_script

O_WRONLY, O_CREAT = 0o1, 0o100
PIPE_R, PIPE_W, NULL, ZERO, FILE, OUT = 3, 4, 5, 6, 7, 8


def test_sendfile_from_a_pipe_or_dev_null_is_einval(arch):
    results, buf, _ = run_script(arch, [
        ("pipe", "BUF"), ("write", PIPE_W, "BUF+16", 2),
        ("open", "/dev/null", 0), ("open", "/dev/zero", 0), ("open", "/f", 0),
        ("open", "/tmp/new", O_WRONLY | O_CREAT, 0o644),
        ("sendfile", OUT, PIPE_R, 0, 2), ("sendfile", OUT, NULL, 0, 2),
        ("sendfile", OUT, ZERO, 0, 2), ("sendfile", OUT, FILE, 0, 6),
        ("sendfile", PIPE_W, PIPE_R, 0, 2),
        ("sendfile", OUT, NULL, "BUF+64", 2), ("sendfile", OUT, PIPE_R, "BUF+64", 2),
        ("read", PIPE_R, "BUF+32", 2)], data=bytes(16) + b"ab" + bytes(60))
    assert results == [0, 2, NULL, ZERO, FILE, OUT, -E.EINVAL, -E.EINVAL, 2, 6, -E.EINVAL,
                       -E.EINVAL, -E.ESPIPE, 2]
    assert buf[32:34] == b"ab"              # the pipe's bytes are still there for read
