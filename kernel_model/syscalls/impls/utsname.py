"""The UTS name: uname and its i386 ancestors, sethostname, setdomainname (kernel/sys.c).

The run's first UTS namespace is `kernel.uts`; a process in one made by unshare or clone
(CLONE_NEWUTS: a copy of its parent's names) sees its own (process/namespaces.py uts_of). The
guest's root holds every capability (creds.py's model), so ns_capable(uts_ns->user_ns,
CAP_SYS_ADMIN) holds for a process with that capability in effect (root, not root that set its euid to another: cap_emulate_setxuid
clears the effective set) and the hostname and domain name can be set; uname then reports
them. Nothing reaches the host.

Layouts (include/uapi/linux/utsname.h): struct new_utsname has six fields of 65 bytes (uname,
both ABIs), struct old_utsname five of 65 (i386 `olduname`, nr 109), struct oldold_utsname five
of 9 (i386 `oldolduname`, nr 59; each field is cut to 8 bytes and NUL-terminated).
"""
from dataclasses import dataclass

from ... import errno as E
from ...creds import CAP_SYS_ADMIN
from ...errno import GuestErrno
from ...fs.sysctl_write import string_writer
from ...process.namespaces import uts_of
from ..kinds import K
from ..registry import syscall

NEW_UTS_LEN = 64                       # __NEW_UTS_LEN: longest name sethostname accepts
OLD_UTS_LEN = 8                        # __OLD_UTS_LEN
UTS_RELEASE = b"6.1.0-trapline"
UTS_VERSION = b"#1 SMP PREEMPT_DYNAMIC trapline"
UTS_MACHINE = {"i386": b"i686", "x86_64": b"x86_64"}
# /proc/version (fs/proc/version.c, linux_proc_banner in init/version.c): sysname, release, who
# built it where with what compiler, version
PROC_VERSION = b"Linux version %s (trapline@trapline) (trapline) %s\n" % (UTS_RELEASE, UTS_VERSION)


@dataclass
class UtsName:
    """The settable fields of the run's UTS namespace (raw bytes as set: they may hold NULs)."""
    nodename: bytes = b"trapline"
    domainname: bytes = b"(none)"

    def sysctls(self) -> dict:
        """kernel.hostname and kernel.domainname (kernel/utsname_sysctl.c): root writes them
        as sethostname would, through proc_do_uts_string's proc_dostring (a field of
        __NEW_UTS_LEN + 1 bytes)."""
        return {b"kernel/hostname": self._entry("nodename"),
                b"kernel/domainname": self._entry("domainname")}

    def _entry(self, field: str):
        def get() -> bytes:
            return getattr(self, field)

        def put(value: bytes) -> None:
            setattr(self, field, value)
        return get, string_writer(get, put, NEW_UTS_LEN + 1)


def _fields(ctx) -> tuple[bytes, ...]:
    uts = uts_of(ctx.kernel, ctx.proc)
    machine = UTS_MACHINE[ctx.proc.arch if ctx.abi == "x86_64" else "i386"]
    return (b"Linux", uts.nodename, UTS_RELEASE, UTS_VERSION, machine, uts.domainname)


def _field(value: bytes, size: int) -> bytes:
    """A char[size] field: the value cut to size - 1 bytes, NUL-padded (strscpy-like)."""
    return value[:size - 1].ljust(size, b"\0")


@syscall("uname", args=(("buf", K.UTSNAME_OUT),))
def sys_uname(ctx, buf):
    ctx.write(buf, b"".join(_field(f, NEW_UTS_LEN + 1) for f in _fields(ctx)))
    return 0


@syscall("olduname")
def sys_olduname(ctx, buf):
    """i386 sys_uname(struct old_utsname *): the first five fields of new_utsname."""
    ctx.write(buf, b"".join(_field(f, NEW_UTS_LEN + 1) for f in _fields(ctx)[:5]))
    return 0


@syscall("oldolduname")
def sys_oldolduname(ctx, buf):
    """i386 sys_olduname(struct oldold_utsname *): EFAULT for NULL (it checks `if (!name)`
    first), each field copied with __OLD_UTS_LEN bytes and a NUL."""
    if not buf:
        raise GuestErrno(E.EFAULT)
    ctx.write(buf, b"".join(_field(f, OLD_UTS_LEN + 1) for f in _fields(ctx)[:5]))
    return 0


def _read_name(ctx, name: int, length: int) -> bytes:
    """The checks sethostname and setdomainname share, in their order: CAP_SYS_ADMIN (EPERM),
    len a C int in 0..__NEW_UTS_LEN (EINVAL), then the bytes are copied (EFAULT) — exactly
    `len` of them, NULs included."""
    if not ctx.proc.creds.capable(CAP_SYS_ADMIN):
        raise GuestErrno(E.EPERM)
    length = ctx.int32(length)
    if not 0 <= length <= NEW_UTS_LEN:
        raise GuestErrno(E.EINVAL)
    return ctx.read(name, length) if length else b""


@syscall("sethostname", args=(("name", K.BUF_IN), ("len", K.INT)))
def sys_sethostname(ctx, name, length):
    uts_of(ctx.kernel, ctx.proc).nodename = _read_name(ctx, name, length)
    return 0


@syscall("setdomainname", args=(("name", K.BUF_IN), ("len", K.INT)))
def sys_setdomainname(ctx, name, length):
    uts_of(ctx.kernel, ctx.proc).domainname = _read_name(ctx, name, length)
    return 0
