"""landlock_create_ruleset, landlock_add_rule and landlock_restrict_self
(security/landlock/syscalls.c), each with its checks in Linux's order.

The rulesets and domains are kernel_model/landlock/'s; a domain is kept in the calling
thread's TaskFlags (landlock_restrict_self restricts the calling thread only, as Linux without
LANDLOCK_RESTRICT_SELF_TSYNC).
"""
import struct
from dataclasses import replace

from ... import errno as E
from ...creds import CAP_SYS_ADMIN
from ...errno import GuestErrno
from ...landlock import abi
from ...landlock.domain import NO_DOMAIN
from ...landlock.ruleset import Ruleset, RulesetFile
from ..kinds import K
from ..registry import syscall

PAGE_SIZE = 4096


@syscall("landlock_create_ruleset", args=(("attr", K.PTR), ("size", K.ULONG), ("flags", K.HEX)))
def sys_landlock_create_ruleset(ctx, attr, size, flags):
    flags &= 0xFFFFFFFF
    if flags:
        # only the two queries, each with no attr and size 0
        if not attr and not size and flags == abi.CREATE_RULESET_VERSION:
            return abi.ABI_VERSION
        if not attr and not size and flags == abi.CREATE_RULESET_ERRATA:
            return abi.ERRATA
        raise GuestErrno(E.EINVAL)
    handled_fs, handled_net, scoped = _read_ruleset_attr(ctx, attr, size)
    if handled_fs & ~abi.MASK_ACCESS_FS or handled_net & ~abi.MASK_ACCESS_NET \
            or scoped & ~abi.MASK_SCOPE:
        raise GuestErrno(E.EINVAL)
    if not (handled_fs or handled_net or scoped):
        raise GuestErrno(E.ENOMSG)          # ruleset.c create_ruleset: nothing to restrict
    ruleset = RulesetFile(Ruleset(handled_fs, handled_net, scoped))
    return ctx.proc.fds.install(ruleset, cloexec=True)


def _read_ruleset_attr(ctx, attr: int, size: int) -> tuple[int, int, int]:
    """copy_min_struct_from_user: EFAULT for NULL, EINVAL below handled_access_fs, E2BIG past
    a page, then copy_struct_from_user (E2BIG for a non-zero byte past the known fields, a
    shorter struct read as zero-extended)."""
    if not attr:
        raise GuestErrno(E.EFAULT)
    if size < abi.RULESET_ATTR_MIN_SIZE:
        raise GuestErrno(E.EINVAL)
    if size > PAGE_SIZE:
        raise GuestErrno(E.E2BIG)
    raw = ctx.read(attr, size)
    if any(raw[abi.RULESET_ATTR_SIZE:]):
        raise GuestErrno(E.E2BIG)
    return struct.unpack("<3Q", raw[:abi.RULESET_ATTR_SIZE].ljust(abi.RULESET_ATTR_SIZE, b"\0"))


def _ruleset_of(ctx, fd: int) -> Ruleset:
    """get_ruleset_from_fd: EBADF for no fd, EBADFD for another file (its EPERM for a
    description without the mode asked cannot happen: a ruleset's is always O_RDWR)."""
    f = ctx.proc.fds.get(ctx.int32(fd))
    if not isinstance(f, RulesetFile):
        raise GuestErrno(E.EBADFD)
    return f.ruleset


@syscall("landlock_add_rule", args=(("ruleset_fd", K.FD), ("rule_type", K.INT),
                                    ("rule_attr", K.PTR), ("flags", K.HEX)))
def sys_landlock_add_rule(ctx, ruleset_fd, rule_type, rule_attr, flags):
    if flags & 0xFFFFFFFF:
        raise GuestErrno(E.EINVAL)
    ruleset = _ruleset_of(ctx, ruleset_fd)
    rule_type = ctx.int32(rule_type)
    if rule_type == abi.RULE_PATH_BENEATH:
        return _add_path_beneath(ctx, ruleset, rule_attr)
    if rule_type == abi.RULE_NET_PORT:
        return _add_net_port(ctx, ruleset, rule_attr)
    raise GuestErrno(E.EINVAL)


def _add_path_beneath(ctx, ruleset: Ruleset, rule_attr: int) -> int:
    allowed, parent_fd = struct.unpack("<Qi", ctx.read(rule_attr, abi.PATH_BENEATH_ATTR_SIZE))
    if not allowed:
        raise GuestErrno(E.ENOMSG)
    if allowed & ~ruleset.handled_fs:
        raise GuestErrno(E.EINVAL)          # only what the ruleset handles
    ruleset.allow_beneath(_hierarchy_of(ctx, parent_fd), allowed)
    return 0


def _hierarchy_of(ctx, fd: int) -> bytes:
    """get_path_from_fd: any fd, O_PATH included (fdget_raw), of a file in the file system;
    a ruleset, pipe, socket or other anonymous inode is EBADFD."""
    f = ctx.proc.fds.get(fd)
    path = getattr(f, "path", b"")
    if getattr(f, "node", None) is None or not path.startswith(b"/"):
        raise GuestErrno(E.EBADFD)
    return path


def _add_net_port(ctx, ruleset: Ruleset, rule_attr: int) -> int:
    allowed, port = struct.unpack("<QQ", ctx.read(rule_attr, abi.NET_PORT_ATTR_SIZE))
    if not allowed:
        raise GuestErrno(E.ENOMSG)
    if allowed & ~ruleset.handled_net:
        raise GuestErrno(E.EINVAL)
    if port > 0xFFFF:
        raise GuestErrno(E.EINVAL)
    ruleset.allow_port(port, allowed)
    return 0


@syscall("landlock_restrict_self", args=(("ruleset_fd", K.FD), ("flags", K.HEX)))
def sys_landlock_restrict_self(ctx, ruleset_fd, flags):
    """Without no_new_privs the caller must hold CAP_SYS_ADMIN (EPERM, first), then the flags
    (EINVAL), then the ruleset, except for fd -1 with LOG_SUBDOMAINS_OFF alone, which only
    sets a logging flag (nothing to log here: the domain stays)."""
    flags &= 0xFFFFFFFF
    task = ctx.thread.task_flags
    if not task.no_new_privs and not ctx.proc.creds.capable(CAP_SYS_ADMIN):
        raise GuestErrno(E.EPERM)
    if flags & ~abi.MASK_RESTRICT_SELF:
        raise GuestErrno(E.EINVAL)
    if ctx.int32(ruleset_fd) == -1 and flags == abi.RESTRICT_SELF_LOG_SUBDOMAINS_OFF:
        return 0
    ruleset = _ruleset_of(ctx, ruleset_fd)
    domain = (task.landlock or NO_DOMAIN).restricted_by(ruleset)
    ctx.thread.task_flags = replace(task, landlock=domain)
    return 0
