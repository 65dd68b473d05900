"""Process-level calls: exit, ids, execve, TLS setup, limits, sysinfo (uname: utsname.py)."""
import struct

from ... import errno as E
from ...errno import GuestErrno
from ...process.exec import execve
from ...creds import CAP_SETGID, CAP_SYS_RESOURCE
from ...user_namespace import make_kid, munged
from ...pid_namespace import global_pid
from ...process.proc import INIT_PID
from ...flags import (ARCH_GET_CPUID, ARCH_GET_FS, ARCH_GET_GS, ARCH_SET_CPUID, ARCH_SET_FS,
                      ARCH_SET_GS)
from ..kinds import K, Ret
from ..registry import NO_RETURN, syscall
from ...time_namespace import CLOCK_BOOTTIME

RLIM_INFINITY = (1 << 64) - 1
RLIMIT_STACK, RLIMIT_NOFILE, RLIMIT_NPROC = 3, 7, 6
RLIMIT_NICE, RLIMIT_RTPRIO, RLIMIT_CPU = 13, 14, 0
# Linux's INIT_RLIMITS for what they do not leave unlimited (RLIMIT_NICE and RLIMIT_RTPRIO are
# 0: raising a priority needs them raised, or CAP_SYS_NICE, which root holds)
DEFAULT_RLIMITS = {RLIMIT_STACK: (8 << 20, RLIM_INFINITY), RLIMIT_NOFILE: (1024, 1048576),
                   RLIMIT_NPROC: (4096, 4096), 4: (0, RLIM_INFINITY),      # 4 = RLIMIT_CORE
                   RLIMIT_NICE: (0, 0), RLIMIT_RTPRIO: (0, 0)}
RLIM_NLIMITS = 16


@syscall("exit", args=(("status", K.INT),), returns=Ret.NONE, outside_hook=True)
def sys_exit(ctx, status):
    """Ends the calling thread; the process ends with its last thread."""
    ctx.kernel.exit_thread(ctx.thread, status & 0xFF)
    return NO_RETURN


@syscall("exit_group", args=(("status", K.INT),), returns=Ret.NONE, outside_hook=True)
def sys_exit_group(ctx, status):
    ctx.kernel.exit_process(ctx.proc, status & 0xFF)
    return NO_RETURN


@syscall("getpid", args=())
def sys_getpid(ctx):
    proc = ctx.proc                     # task_tgid_vnr: in its own pid namespace
    return proc.pid if proc.pid_ns.initial else proc.pid_ns.nr(proc.pid)


@syscall("gettid", args=())
def sys_gettid(ctx):
    return ctx.proc.pid_ns.nr(ctx.thread.tid)


@syscall("getppid", args=())
def sys_getppid(ctx):
    return ctx.proc.pid_ns.nr(ctx.proc.ppid)       # 0 for a parent outside its namespace


NGROUPS_MAX = 65536
OVERFLOW_GID = 65534


def _gid_size(ctx, name: str) -> int:
    """i386's getgroups/setgroups (80, 81) are the 16-bit old_gid_t ones (kernel/uid16.c);
    the *32 calls and x86-64's take 32-bit gids."""
    return 2 if ctx.abi == "i386" and not name.endswith("32") else 4


def _getgroups(ctx, name: str, size: int, lst: int) -> int:
    """kernel/groups.c getgroups: a negative size is EINVAL; a size of 0 asks for the count;
    a smaller size than the count is EINVAL; only the groups are copied out."""
    size = ctx.int32(size)
    if size < 0:
        raise GuestErrno(E.EINVAL)
    user_ns = ctx.proc.creds.user_ns               # as the caller's namespace sees them
    groups = [munged(user_ns, g, "gid_map") for g in ctx.proc.groups]
    if size:
        if len(groups) > size:
            raise GuestErrno(E.EINVAL)
        width = _gid_size(ctx, name)
        if width == 2:                    # high2lowgid: what does not fit is the overflow gid
            groups = [g if g <= 0xFFFF else OVERFLOW_GID for g in groups]
        ctx.write(lst, b"".join(g.to_bytes(width, "little") for g in groups))
    return len(groups)


def _setgroups(ctx, name: str, size: int, lst: int) -> int:
    """kernel/groups.c setgroups: CAP_SETGID first (may_setgroups: EPERM; the sandbox's
    root has it until it gives up its effective ids); more than NGROUPS_MAX, or a negative
    size as unsigned, is EINVAL before anything is read; then the list, EFAULT."""
    creds = ctx.proc.creds
    # may_setgroups: CAP_SETGID in the caller's user namespace, whose gid map is written and
    # setgroups not denied (userns_may_setgroups)
    if not creds.capable_here(CAP_SETGID) or not (creds.user_ns.gid_map and creds.user_ns.setgroups_allowed):
        raise GuestErrno(E.EPERM)
    size = ctx.int32(size)
    if size & 0xFFFFFFFF > NGROUPS_MAX:
        raise GuestErrno(E.EINVAL)
    width = _gid_size(ctx, name)
    raw = ctx.read(lst, size * width) if size else b""
    gids = [int.from_bytes(raw[i:i + width], "little") for i in range(0, len(raw), width)]
    if width == 2:                        # low2highgid: (old_gid_t)-1 stays -1
        gids = [0xFFFFFFFF if g == 0xFFFF else g for g in gids]
    gids = [make_kid(creds.user_ns, g, "gid_map") for g in gids]
    if None in gids:
        raise GuestErrno(E.EINVAL)        # groups_from_user: a gid the namespace does not map
    ctx.proc.groups = tuple(sorted(gids))         # groups_sort keeps duplicates
    return 0


@syscall("getgroups")
def sys_getgroups(ctx, size, lst):
    return _getgroups(ctx, "getgroups", size, lst)


@syscall("getgroups32")
def sys_getgroups32(ctx, size, lst):
    return _getgroups(ctx, "getgroups32", size, lst)


@syscall("setgroups")
def sys_setgroups(ctx, size, lst):
    return _setgroups(ctx, "setgroups", size, lst)


@syscall("setgroups32")
def sys_setgroups32(ctx, size, lst):
    return _setgroups(ctx, "setgroups32", size, lst)


@syscall("getpgid", args=(("pid", K.PID),))
def sys_getpgid(ctx, pid):
    ns = ctx.proc.pid_ns
    if pid == INIT_PID and ns.initial:
        return INIT_PID                 # the sandbox's init leads its own group
    proc = ctx.kernel.processes.get(ns.lookup(pid)) if pid else ctx.proc
    if proc is None:
        raise GuestErrno(E.ESRCH)
    return ns.nr(proc.pgid)


@syscall("getpgrp", args=())
def sys_getpgrp(ctx):
    return ctx.proc.pid_ns.nr(ctx.proc.pgid)


@syscall("setpgid", args=(("pid", K.PID), ("pgid", K.PID)))
def sys_setpgid(ctx, pid, pgid):
    """kernel/sys.c setpgid's checks: the caller itself or a child of it (ESRCH), a child in
    the caller's session (EPERM) that has not exec'd (EACCES), into a group that exists in
    that session (EPERM)."""
    me = ctx.proc
    pid, pgid = ctx.int32(pid) or me.pid, ctx.int32(pgid)
    pgid = pgid or pid
    if pgid < 0:
        raise GuestErrno(E.EINVAL)
    proc = ctx.kernel.processes.get(pid)
    if proc is None or proc.state == "zombie" and proc is not me and proc.ppid != me.pid:
        raise GuestErrno(E.ESRCH)
    if proc is not me:
        if proc.ppid != me.pid:
            raise GuestErrno(E.ESRCH)
        if proc.sid != me.sid:
            raise GuestErrno(E.EPERM)
        if proc.did_exec:
            raise GuestErrno(E.EACCES)
    # (Linux also refuses to move a session leader, EPERM; not here: the run's first process
    # is modeled as one, which under a shell it is not, and it may setpgid(0, 0) itself)
    if pgid != pid and not any(p.pgid == pgid and p.sid == me.sid
                               for p in ctx.kernel.processes.values()):
        raise GuestErrno(E.EPERM)
    proc.pgid = pgid
    return 0


@syscall("getsid", args=(("pid", K.PID),))
def sys_getsid(ctx, pid):
    ns = ctx.proc.pid_ns
    if pid == INIT_PID and ns.initial:
        return INIT_PID                 # the sandbox's init leads its own session
    proc = ctx.kernel.processes.get(ns.lookup(pid)) if pid else ctx.proc
    if proc is None:
        raise GuestErrno(E.ESRCH)
    return ns.nr(proc.sid)


@syscall("setsid", args=())
def sys_setsid(ctx):
    if ctx.proc.pgid == ctx.proc.pid:
        raise GuestErrno(E.EPERM)
    ctx.proc.sid = ctx.proc.pgid = ctx.proc.pid
    return ctx.proc.pid_ns.nr(ctx.proc.pid)


@syscall("set_tid_address", args=(("tidptr", K.PTR),))
def sys_set_tid_address(ctx, tidptr):
    ctx.thread.clear_child_tid = tidptr
    return ctx.proc.pid_ns.nr(ctx.thread.tid)


@syscall("set_robust_list", args=(("head", K.PTR), ("len", K.ULONG)))
def sys_set_robust_list(ctx, head, length):
    if length != 3 * ctx.word:          # sizeof(struct robust_list_head)
        raise GuestErrno(E.EINVAL)
    ctx.thread.robust_list = head
    return 0


@syscall("rseq", args=(("rseq", K.PTR), ("rseq_len", K.HEX), ("flags", K.INT), ("sig", K.HEX)))
def sys_rseq(ctx, rseq, rseq_len, flags, sig):
    # Registration accepted; the only CPU is 0, so cpu_id_start and cpu_id are written once.
    if rseq_len < 32 or rseq % 32:
        raise GuestErrno(E.EINVAL)
    ctx.write(rseq, struct.pack("<II", 0, 0))
    return 0


@syscall("arch_prctl", args=(("code", K.ARCH_PRCTL_CODE), ("addr", K.HEX)))
def sys_arch_prctl(ctx, code, addr):
    m = ctx.proc.machine
    if code in (ARCH_GET_CPUID, ARCH_SET_CPUID):
        return _arch_prctl_cpuid(code)
    if ctx.abi != "x86_64":
        raise GuestErrno(E.EINVAL)
    if code in (ARCH_SET_FS, ARCH_SET_GS) and addr >= ctx.proc.vm.layout.user_top:
        raise GuestErrno(E.EPERM)        # do_arch_prctl_64(): a base at or above TASK_SIZE_MAX
    if code == ARCH_SET_FS:
        m.set_reg("fs_base", addr)
        return 0
    if code == ARCH_SET_GS:
        m.set_reg("gs_base", addr)
        return 0
    if code in (ARCH_GET_FS, ARCH_GET_GS):
        ctx.write_word(addr, m.reg("fs_base" if code == ARCH_GET_FS else "gs_base"))
        return 0
    raise GuestErrno(E.EINVAL)


def _arch_prctl_cpuid(code: int) -> int:
    """The codes both ABIs share (arch/x86/kernel/process.c do_arch_prctl_common). The modeled
    CPU has no CPUID faulting (/proc/cpuinfo does not list cpuid_fault), so CPUID is always
    enabled (get_cpuid_mode() answers 1) and asking to change it is ENODEV, as on a host whose
    CPU lacks X86_FEATURE_CPUID_FAULT (set_cpuid_mode)."""
    if code == ARCH_GET_CPUID:
        return 1
    raise GuestErrno(E.ENODEV)


def _rlimit(ctx, resource, proc=None):
    if resource >= RLIM_NLIMITS:
        raise GuestErrno(E.EINVAL)
    limits = (proc or ctx.proc).rlimits
    return limits.get(resource, DEFAULT_RLIMITS.get(resource, (RLIM_INFINITY, RLIM_INFINITY)))


def _clamp(value: int, word: int) -> int:
    return min(value, (1 << (8 * word)) - 1)


@syscall("prlimit64", args=(("pid", K.PID), ("resource", K.RLIMIT_RESOURCE),
                            ("new_limit", K.RLIMIT64_IN), ("old_limit", K.RLIMIT64_OUT)))
def sys_prlimit64(ctx, pid, resource, new_limit, old_limit):
    """kernel/sys.c prlimit64: the new limits are read (EFAULT), the process found (ESRCH) and
    checked (check_prlimit_permission: EPERM), then do_prlimit; the old limits are written
    only when it succeeded."""
    new = struct.unpack("<QQ", ctx.read(new_limit, 16)) if new_limit else None
    pid = ctx.int32(pid)
    pid = global_pid(ctx.proc, pid) if pid >= 0 else pid    # the caller's pid namespace's
    target = ctx.proc if pid in (0, ctx.proc.pid) else ctx.kernel.processes.get(pid)
    if target is None or pid < 0:
        raise GuestErrno(E.ESRCH)
    _check_prlimit_permission(ctx, target)
    old = _do_prlimit(ctx, target, resource, new)
    if old_limit:
        ctx.write(old_limit, struct.pack("<QQ", *old))
    return 0


def _check_prlimit_permission(ctx, target) -> None:
    """The caller's uid must be the target's uid, euid and suid and its gid the target's three
    gids, or it holds CAP_SYS_RESOURCE."""
    if target is ctx.proc:
        return
    mine, theirs = ctx.proc.creds, target.creds
    same = all(mine.uid == u for u in (theirs.uid, theirs.euid, theirs.suid)) and \
        all(mine.gid == g for g in (theirs.gid, theirs.egid, theirs.sgid))
    if not same and not mine.capable(CAP_SYS_RESOURCE):
        raise GuestErrno(E.EPERM)


@syscall("ugetrlimit", args=(("resource", K.RLIMIT_RESOURCE), ("rlim", K.RLIMIT_OUT)))
def sys_ugetrlimit(ctx, resource, rlim):
    """i386's getrlimit of unsigned longs (compat_sys_getrlimit: COMPAT_RLIM_INFINITY, ~0 of
    32 bits, for what does not fit)."""
    soft, hard = _rlimit(ctx, resource)
    fmt = "<II" if ctx.word == 4 else "<QQ"
    ctx.write(rlim, struct.pack(fmt, _clamp(soft, ctx.word), _clamp(hard, ctx.word)))
    return 0


@syscall("getrlimit", args=(("resource", K.RLIMIT_RESOURCE), ("rlim", K.RLIMIT_OUT)))
def sys_getrlimit(ctx, resource, rlim):
    """x86-64's getrlimit; i386's number 76 is the old one of signed longs (kernel/sys.c
    compat_sys_old_getrlimit): a value past 0x7FFFFFFF reads 0x7FFFFFFF (LONG_MAX)."""
    if ctx.word == 8:
        return sys_ugetrlimit(ctx, resource, rlim)
    soft, hard = _rlimit(ctx, resource)
    ctx.write(rlim, struct.pack("<II", min(soft, 0x7FFFFFFF), min(hard, 0x7FFFFFFF)))
    return 0


@syscall("setrlimit")
def sys_setrlimit(ctx, resource, rlim):
    """The new limits are read first (EFAULT), then do_prlimit on the caller."""
    fmt = "<II" if ctx.word == 4 else "<QQ"
    soft, hard = struct.unpack(fmt, ctx.read(rlim, struct.calcsize(fmt)))
    if ctx.word == 4:                     # compat: RLIM_INFINITY is ~0 of 32 bits
        soft, hard = (RLIM_INFINITY if v == 0xFFFFFFFF else v for v in (soft, hard))
    _do_prlimit(ctx, ctx.proc, resource, (soft, hard))
    return 0


def _do_prlimit(ctx, proc, resource: int, new) -> tuple[int, int]:
    """do_prlimit() on `proc`: an unknown resource and a soft limit above the hard one are
    EINVAL, an RLIMIT_NOFILE above nr_open EPERM, a hard limit raised without CAP_SYS_RESOURCE
    EPERM; the limits before are returned. RLIMIT_NOFILE's soft limit is the fd table's
    (alloc_fd refuses an fd at or above it: EMFILE); RLIMIT_CPU's arms the CPU limit's timer
    (update_rlimit_cpu)."""
    old = _rlimit(ctx, resource, proc)
    if new is None:
        return old
    soft, hard = new
    if soft > hard:
        raise GuestErrno(E.EINVAL)
    if resource == RLIMIT_NOFILE and hard > ctx.kernel.fs.tunables.nr_open:
        raise GuestErrno(E.EPERM)
    if hard > old[1] and not ctx.proc.creds.capable(CAP_SYS_RESOURCE):
        raise GuestErrno(E.EPERM)
    if resource == RLIMIT_NOFILE:
        proc.fds.limit = soft
    proc.rlimits[resource] = (soft, hard)
    if resource == RLIMIT_CPU:
        from ...process.cpu_limit import arm
        arm(proc, ctx.kernel.clock.monotonic_ns())
    return old


@syscall("sysinfo", args=(("info", K.STRUCT),))
def sys_sysinfo(ctx, info):
    """do_sysinfo: the figures /proc/uptime, /proc/loadavg and /proc/meminfo show
    (machine_stats.py); the uptime's seconds are rounded up, as do_sysinfo does."""
    from ... import machine_stats
    w = "I" if ctx.word == 4 else "Q"
    # the boot time in the caller's time namespace, a started second counted whole
    uptime = -(-(machine_stats.uptime_ns(ctx.kernel) + ctx.proc.time_ns.offset(CLOCK_BOOTTIME))
               // 10**9)
    # 32-bit fields cannot hold byte counts of several GiB: count in pages there, as Linux's
    # si_meminfo does with mem_unit = PAGE_SIZE.
    unit = 4096 if ctx.word == 4 else 1
    total, free, files = (size // unit for size in machine_stats.memory(ctx.kernel))
    # struct sysinfo (include/uapi/linux/sysinfo.h): after `procs` and `pad` (two shorts) the
    # longs totalhigh/freehigh are 8-byte aligned on x86-64, so 4 bytes of padding come first;
    # without them mem_unit read as 0 and glibc's sysconf(_SC_AVPHYS_PAGES) as 0 pages (sort
    # then sorted 1 MB through 8,000 temporary files).
    align = "4x" if ctx.word == 8 else ""
    body = struct.pack(f"<{w}3{w}6{w}HH{align}{w}{w}I", uptime, 0, 0, 0, total, free, files, 0, 0,
                       0, machine_stats.task_count(ctx.kernel) & 0xFFFF, 0, 0, 0, unit)
    ctx.write(info, body.ljust(64 if ctx.word == 4 else 112, b"\0"))
    return 0


@syscall("execve", args=(("pathname", K.PATH), ("argv", K.ARGV), ("envp", K.ENVP)),
         outside_hook=True)
def sys_execve(ctx, pathname, argv_ptr, envp_ptr):
    path = ctx.read_path(pathname)
    argv = [ctx.read_cstr(p, 131072) for p in ctx.read_pointer_array(argv_ptr)]
    envp = [ctx.read_cstr(p, 131072) for p in ctx.read_pointer_array(envp_ptr)]
    execve(ctx.kernel, ctx.proc, path, argv, envp)           # may fail: caller intact
    return NO_RETURN


@syscall("sched_yield", args=())
def sys_sched_yield(ctx):
    ctx.kernel.scheduler.yield_turn(ctx.thread)
    return 0


@syscall("getcpu")
def sys_getcpu(ctx, cpu, node, cache):
    for p in (cpu, node):
        if p:
            ctx.write(p, b"\0\0\0\0")
    return 0
