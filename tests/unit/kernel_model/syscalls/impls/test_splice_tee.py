"""splice and tee on both ABIs (syscalls/impls/splice.py): ENOSYS before (LTP splice01-09,
tee01-02). Bytes go file -> pipe (at the file position or at *off_in, which advances), pipe
-> pipe, pipe -> file; tee copies without consuming; the errors come in fs/splice.c's order."""
import struct

from kernel_model import errno as E

from ...call_script import run_script

O_RDONLY, O_RDWR, O_CREAT = 0, 2, 0o100
SPLICE_F_NONBLOCK = 2
FILE = b"hello\n" * 100                       # the rootfs's /f


def test_bytes_move_between_files_and_pipes(arch):
    data = bytes(2048) + struct.pack("<q", 100)
    results, buf, _ = run_script(arch, [
        ("pipe", "BUF+1024"),                                    # A: 3, 4
        ("pipe", "BUF+1032"),                                    # B: 5, 6
        ("open", "/f", O_RDONLY),                                # 7
        ("splice", 7, 0, 4, 0, 10, 0),                           # file position 0..10
        ("splice", 7, "BUF+2048", 4, 0, 6, 0),                   # *off_in 100..106
        ("tee", 3, 6, 100, 0),                                   # A's 16 bytes copied to B
        ("splice", 3, 0, 6, 0, 4, 0),                            # 4 of them moved to B
        ("open", "/tmp/new", O_CREAT | O_RDWR, 0o644),           # 8
        ("splice", 3, 0, 8, 0, 100, 0),                          # the other 12 to the file
        ("splice", 3, 0, 8, 0, 100, SPLICE_F_NONBLOCK),          # A is empty, 4 still writes
        ("read", 5, "BUF+512", 100),
        ("pread64", 8, "BUF+640", 100, 0),
        ("lseek", 7, 0, 1),
        ("close", 4),
        ("splice", 3, 0, 8, 0, 5, 0),                            # no writer left: end of file
    ], data=data)
    a = FILE[0:10] + FILE[100:106]
    assert results[:10] == [0, 0, 7, 10, 6, 16, 4, 8, 12, -E.EAGAIN]
    assert results[10:] == [20, 12, 10, 0, 0]
    assert struct.unpack_from("<q", buf, 2048)[0] == 106
    assert buf[512:532] == a + a[:4] and buf[640:652] == a[4:]


def test_errors_come_in_linux_order(arch):
    results, _, _ = run_script(arch, [
        ("pipe", "BUF+1024"),                                    # 3, 4
        ("pipe", "BUF+1032"),                                    # 5, 6
        ("open", "/f", O_RDONLY),                                # 7
        ("open", "/tmp/new", O_CREAT | O_RDWR, 0o644),           # 8
        ("splice", 7, 0, 4, 0, 0, 0x10),                         # a length of 0 first
        ("splice", 7, 0, 4, 0, 1, 0x10),                         # an unknown flag
        ("splice", 99, 0, 4, 0, 1, 0),
        ("splice", 4, 0, 6, 0, 1, 0),                            # a write end as input
        ("splice", 3, 0, 4, 0, 1, 0),                            # one pipe both ways
        ("splice", 7, 0, 8, 0, 1, 0),                            # no pipe
        ("splice", 3, "BUF", 6, 0, 1, 0),                        # an offset on a pipe
        ("splice", 7, 0, 4, "BUF", 1, 0),
        ("tee", 3, 8, 1, 0),                                     # tee needs two pipes
        ("tee", 3, 4, 1, 0),
        ("tee", 3, 6, 1, 0x10),
        ("tee", 5, 4, 1, SPLICE_F_NONBLOCK),                     # nothing in B
    ])
    assert results[:4] == [0, 0, 7, 8]
    assert results[4:] == [0, -E.EINVAL, -E.EBADF, -E.EBADF, -E.EINVAL, -E.EINVAL, -E.ESPIPE,
                           -E.ESPIPE, -E.EINVAL, -E.EINVAL, -E.EINVAL, -E.EAGAIN]


def test_a_socket_takes_and_gives_bytes_through_a_pipe(arch):
    """LTP splice05: pipe -> socket -> pipe (EINVAL before sockets had splice here)."""
    AF_UNIX, SOCK_STREAM = 1, 1
    results, buf, _ = run_script(arch, [
        ("pipe", "BUF+1024"),                                    # 3, 4
        ("pipe", "BUF+1032"),                                    # 5, 6
        ("socketpair", AF_UNIX, SOCK_STREAM, 0, "BUF+1040"),    # 7, 8
        ("write", 4, "BUF", 5),
        ("splice", 3, 0, 7, 0, 5, 0),
        ("splice", 8, 0, 6, 0, 5, 0),
        ("read", 5, "BUF+512", 100),
    ], data=b"hello")
    assert results == [0, 0, 0, 5, 5, 5, 5] and buf[512:517] == b"hello"
