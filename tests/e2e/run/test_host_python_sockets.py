"""The host's own python3 under trapline uses AF_UNIX sockets as natively (issue 32):
asyncio's event loop (its self-pipe is a socketpair, its selector epoll), a unix server on an
abstract name and one on a path in the working folder with clients in the same loop, and
loop.sock_sendall/sock_recv on a socketpair. Both runs must print the same lines."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.native_oracle import run_host
from tests.e2e.sandbox_runner import FIXED_ENV, assert_same_behaviour, run_sandbox

pytestmark = pytest.mark.e2e

PYTHON = Path("/usr/bin/python3")
SCRIPT = '''
import asyncio, selectors, socket

async def handle(reader, writer):
    writer.write((await reader.readline()).upper())
    await writer.drain()
    writer.close()

async def exchange(**where):
    server = await asyncio.start_unix_server(handle, **where)
    replies = []
    for i in range(3):
        reader, writer = await asyncio.open_unix_connection(**where)
        writer.write(b"hello %d\\n" % i)
        replies.append(await reader.readline())
        writer.close()
    server.close()
    await server.wait_closed()
    return replies

async def main():
    print("abstract", await exchange(path="\\0trapline-asyncio"))
    print("path", await exchange(path="server.sock"))
    a, b = socket.socketpair()
    a.setblocking(False); b.setblocking(False)
    loop = asyncio.get_running_loop()
    async def receive():
        got = b""
        while len(got) < 300000:
            got += await loop.sock_recv(b, 65536)
        return got
    _, got = await asyncio.gather(loop.sock_sendall(a, b"x" * 300000), receive())
    print("socketpair", len(got), got == b"x" * 300000)
    print("sleeps", await asyncio.gather(*(asyncio.sleep(0.001 * i, result=i) for i in range(4))))

print(type(selectors.DefaultSelector()).__name__)
asyncio.run(main())
'''


@pytest.mark.skipif(not PYTHON.exists(), reason="the host has no /usr/bin/python3")
def test_asyncio_unix_sockets_match_native(tmp_path):
    (tmp_path / "aio.py").write_text(SCRIPT)
    argv = [str(PYTHON), "-S", "aio.py"]
    native = run_host(argv, cwd=str(tmp_path), env=FIXED_ENV, timeout=60)
    assert native.returncode == 0, native.stderr
    assert b"EpollSelector" in native.stdout and b"socketpair 300000 True" in native.stdout
    sandbox = run_sandbox(argv, rootfs=None, cwd=str(tmp_path), env=FIXED_ENV, clear_env=True,
                          timeout=600)
    assert_same_behaviour(sandbox, native)
