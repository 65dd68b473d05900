"""AF_UNIX pathname sockets in the overlay file system, over a fake context with a real
FileSystem: bind makes an S_IFSOCK inode under the umask, a name that exists is EADDRINUSE,
connect finds the socket by its inode (a rename keeps it reachable, an unlink makes the name
ENOENT), a file that is no socket or a socket file whose socket closed is ECONNREFUSED, and
open(2) of a socket inode is ENXIO."""
import os
import struct

import pytest

from kernel_model import errno as E
from kernel_model.errno import GuestErrno
from kernel_model.fs import FileSystem
from kernel_model.fsview import fs_view
from kernel_model.net.constants import SOCK_STREAM
from kernel_model.syscalls.impls.sockets import sys_bind, sys_connect, sys_listen, sys_socket

from .socketctx import ADDR, AF_UNIX, socket_ctx


def errno_of(call, *args):
    with pytest.raises(GuestErrno) as info:
        call(*args)
    return info.value.errno


@pytest.fixture
def ctx(tmp_path):
    (tmp_path / "plain").write_bytes(b"not a socket")
    ctx = socket_ctx()
    ctx.kernel.fs = FileSystem(str(tmp_path))
    ctx.proc.root, ctx.proc.ppid, ctx.proc.exe = b"/", 1, b"/x"
    return ctx


def put_path(ctx, path: bytes) -> int:
    ctx.write(ADDR, struct.pack("<H", AF_UNIX) + path + b"\0")
    return 2 + len(path) + 1


def server(ctx, path: bytes) -> int:
    fd = sys_socket(ctx, AF_UNIX, SOCK_STREAM, 0)
    assert sys_bind(ctx, fd, ADDR, put_path(ctx, path)) == 0
    sys_listen(ctx, fd, 4)
    return fd


def test_bind_makes_a_socket_inode_and_connect_finds_it(ctx, tmp_path):
    server(ctx, b"/srv.sock")
    st = ctx.kernel.fs.stat(b"/srv.sock", b"/", fs_view(ctx.proc))
    assert st.mode == 0o140755                               # S_IFSOCK | 0777 & ~022
    assert not os.path.exists(tmp_path / "srv.sock")        # the overlay holds it
    other = sys_socket(ctx, AF_UNIX, SOCK_STREAM, 0)
    assert errno_of(sys_bind, ctx, other, ADDR, put_path(ctx, b"/srv.sock")) == E.EADDRINUSE
    assert sys_connect(ctx, other, ADDR, put_path(ctx, b"/srv.sock")) == 0
    assert errno_of(ctx.kernel.fs.open, b"/srv.sock", 0, 0, b"/", fs_view(ctx.proc)) == E.ENXIO


def test_rename_unlink_and_refusals(ctx):
    srv = server(ctx, b"/a.sock")
    fs, view = ctx.kernel.fs, fs_view(ctx.proc)
    fs.rename(b"/a.sock", b"/b.sock", b"/", view)
    client = sys_socket(ctx, AF_UNIX, SOCK_STREAM, 0)
    assert sys_connect(ctx, client, ADDR, put_path(ctx, b"/b.sock")) == 0
    fs.unlink(b"/b.sock", b"/", view)
    late = sys_socket(ctx, AF_UNIX, SOCK_STREAM, 0)
    assert errno_of(sys_connect, ctx, late, ADDR, put_path(ctx, b"/b.sock")) == E.ENOENT
    assert errno_of(sys_connect, ctx, late, ADDR, put_path(ctx, b"/plain")) == E.ECONNREFUSED
    server(ctx, b"/c.sock")
    ctx.proc.fds.close(srv)
    closed = server(ctx, b"/d.sock")
    ctx.proc.fds.close(closed)                               # the inode stays, nobody listens
    assert errno_of(sys_connect, ctx, late, ADDR, put_path(ctx, b"/d.sock")) == E.ECONNREFUSED
    assert sys_connect(ctx, late, ADDR, put_path(ctx, b"/c.sock")) == 0
