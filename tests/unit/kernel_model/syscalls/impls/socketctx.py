"""A fake context for the socket calls: fakectx's, with the kernel's table of unix names, a
current thread for read/write's credentials, a report log, and helpers that lay socket
structures out in its memory."""
import struct
from types import SimpleNamespace

from kernel_model.creds import ROOT
from kernel_model.net.inet_ports import InetPorts
from kernel_model.net.names import UnixNames

from .fakectx import BASE, fake_ctx

AF_UNIX = 1
ADDR = BASE + 0x100        # a struct sockaddr_un
LEN = BASE + 0x200         # a socklen_t
OUT = BASE + 0x300         # an address buffer for getsockname/accept/recvfrom
SV = BASE + 0x400          # int[2]
DATA = BASE + 0x1000       # data buffers
PID = 4242


def socket_ctx(abi: str = "x86_64"):
    ctx = fake_ctx(abi)
    ctx.kernel.unix_names = UnixNames()
    ctx.kernel.inet_ports = InetPorts()
    ctx.kernel.reports = []
    ctx.kernel.report = ctx.kernel.reports.append
    ctx.proc.pid = PID
    ctx.proc.cwd = b"/"
    ctx.proc.umask = 0o022
    ctx.proc.creds = ROOT
    ctx.kernel.current = ctx.thread
    ctx.kernel.fs = None           # abstract names only: pathnames are tested end to end
    ctx.vm.layout = SimpleNamespace(user_top=1 << 32)      # iovecs pass access_ok
    return ctx


def put_abstract(ctx, name: bytes, at: int = ADDR) -> int:
    """A sockaddr_un for the abstract `name` at `at`; its length."""
    raw = struct.pack("<H", AF_UNIX) + b"\0" + name
    ctx.write(at, raw)
    return len(raw)


def put_len(ctx, value: int, at: int = LEN) -> None:
    ctx.write(at, struct.pack("<i", value))


def get_len(ctx, at: int = LEN) -> int:
    return struct.unpack("<i", ctx.read(at, 4))[0]


def pair_fds(ctx) -> tuple[int, int]:
    return struct.unpack("<ii", ctx.read(SV, 8))
