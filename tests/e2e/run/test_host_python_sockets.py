"""The host's own python3 under trapline uses sockets as natively (issue 32): asyncio's event
loop (its self-pipe is a socketpair, its selector epoll), a unix server on an abstract name
and one on a path in the working folder with clients in the same loop,
loop.sock_sendall/sock_recv on a socketpair; then TCP servers and clients on 127.0.0.1 and
::1 (ephemeral ports), UDP on 127.0.0.1, EADDRINUSE and ECONNREFUSED. Both runs must print
the same lines."""
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
INET_SCRIPT = '''
import asyncio, socket

async def handle(reader, writer):
    writer.write((await reader.readline()).upper())
    await writer.drain()
    writer.close()

async def tcp(host, family):
    server = await asyncio.start_server(handle, host, 0, family=family)
    port = server.sockets[0].getsockname()[1]
    replies = []
    for i in range(3):
        reader, writer = await asyncio.open_connection(host, port)
        writer.write(b"tcp %d\\n" % i)
        replies.append(await reader.readline())
        writer.close()
    server.close()
    await server.wait_closed()
    return replies

def udp():
    a = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    a.bind(("127.0.0.1", 0))
    b = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    b.sendto(b"datagram", a.getsockname())
    data, source = a.recvfrom(100)
    a.sendto(data.upper(), source)
    return data, b.recv(100)

def errors():
    s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen()
    out = []
    for action in (lambda: socket.socket().bind(s.getsockname()),
                   lambda: socket.socket().connect(("127.0.0.1", 1))):
        try:
            action()
        except OSError as e:
            out.append(e.errno)
    return out

async def main():
    print("ipv4", await tcp("127.0.0.1", socket.AF_INET))
    print("ipv6", await tcp("::1", socket.AF_INET6))
    print("udp", udp())
    print("errnos", errors())

asyncio.run(main())
'''


@pytest.mark.skipif(not PYTHON.exists(), reason="the host has no /usr/bin/python3")
@pytest.mark.parametrize("script,check", [(SCRIPT, b"socketpair 300000 True"),
                                          (INET_SCRIPT, b"errnos [98, 111]")],
                         ids=["unix", "loopback"])
def test_python_sockets_match_native(tmp_path, script, check):
    (tmp_path / "aio.py").write_text(script)
    argv = [str(PYTHON), "-S", "aio.py"]
    native = run_host(argv, cwd=str(tmp_path), env=FIXED_ENV, timeout=60)
    assert native.returncode == 0, native.stderr
    assert check in native.stdout
    sandbox = run_sandbox(argv, rootfs=None, cwd=str(tmp_path), env=FIXED_ENV, clear_env=True,
                          timeout=600)
    assert_same_behaviour(sandbox, native)
