"""strace's decoding of the arguments the kernel declares generically (arguments.py: flag
tables, enums and structures as data), sigreturn's mask, set_thread_area's descriptor and the
signal lines (siginfo.py). Expected texts are Debian's strace 6.1 output for the same calls."""
import struct

import pytest

from trapline.strace.siginfo import format_siginfo
from trapline.strace.structs import SIGRETURN_MASK_OFFSET
from trapline.strace.syscall_line import format_syscall
from tests.unit.trapline.strace.fake_memory import FakeMemory

NAME, RANDOM, STATX, TIMER, DIRENTS, CPUS, SIGSET, DESC, FRAME = (
    0x1000, 0x1100, 0x1200, 0x1400, 0x1500, 0x1700, 0x1800, 0x1900, 0x2000)
EINTR, ERESTARTNOHAND = 4, 514


def _memory() -> FakeMemory:
    mem = FakeMemory()
    mem.put(NAME, b"busybox\0")
    mem.put(RANDOM, bytes([0xd5, 0xaa, 0x30, 0x65]))
    statx = bytearray(256)
    struct.pack_into("<IIQ", statx, 0, 0x17ff, 4096, 0x2000)
    struct.pack_into("<H", statx, 28, 0o40555)
    struct.pack_into("<Q", statx, 40, 4096)
    mem.put(STATX, bytes(statx))
    mem.put(TIMER, struct.pack("<4q", 0, 0, 0, 10000))
    records = b"".join(struct.pack("<QqH", 1, 1, 24) + bytes(5) + b"\0" for _ in range(3))
    mem.put(DIRENTS, records)
    mem.put(CPUS, bytes([3]) + bytes(7))
    mem.put(SIGSET, struct.pack("<Q", 1 << 9))            # SIGUSR1 (10)
    mem.put(DESC, struct.pack("<iIII", 12, 0x18540, 0xfffff, 0x51))
    mem.put(FRAME + SIGRETURN_MASK_OFFSET[("rt_sigreturn", 64)], struct.pack("<Q", 1 << 13))
    return mem


def _line(name, args, ret, bits=64):
    return format_syscall(name, args, ret, _memory(), bits)


@pytest.mark.parametrize("bits", [32, 64])
def test_prctl_options_by_name(bits):
    assert _line("prctl", (16, NAME, 0, 0, 0), 0, bits) == 'prctl(PR_GET_NAME, "busybox") = 0'
    assert _line("prctl", (15, NAME, 0, 0, 0), 0, bits) == 'prctl(PR_SET_NAME, "busybox") = 0'
    assert _line("prctl", (1, 9, 0, 0, 0), 0, bits) == "prctl(PR_SET_PDEATHSIG, SIGKILL) = 0"
    assert _line("prctl", (38, 1, 0, 0, 0), 0, bits) == "prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) = 0"
    assert _line("prctl", (0x777, 1, 0, 0, 0), -22, bits) == (
        "prctl(0x777 /* PR_??? */, 0x1, 0, 0, 0) = -1 EINVAL (Invalid argument)")


def test_getrandom_in_hex_and_its_flags():
    assert _line("getrandom", (RANDOM, 4, 1), 4) == (
        'getrandom("\\xd5\\xaa\\x30\\x65", 4, GRND_NONBLOCK) = 4')
    assert _line("getrandom", (RANDOM, 4, 3), -11) == (
        "getrandom(0x1100, 4, GRND_NONBLOCK|GRND_RANDOM) = -1 EAGAIN (Resource temporarily unavailable)")


def test_statx():
    assert _line("statx", ((-100) & (2**64 - 1), NAME, 0x800, 0x7ff, STATX), 0) == (
        'statx(AT_FDCWD, "busybox", AT_STATX_SYNC_AS_STAT|AT_NO_AUTOMOUNT, STATX_BASIC_STATS, '
        "{stx_mask=STATX_BASIC_STATS|STATX_MNT_ID, stx_attributes=STATX_ATTR_MOUNT_ROOT, "
        "stx_mode=S_IFDIR|0555, stx_size=4096, ...}) = 0")


def test_statx_answered_with_the_birth_time_names_statx_all():
    """0x1fff answered (a tmpfs or ext4 file asked STATX_ALL or STATX_BTIME): strace names
    STATX_ALL in the answer as in the request."""
    mem = _memory()
    answer = bytearray(mem.read(STATX, 256))
    struct.pack_into("<I", answer, 0, 0x1fff)
    mem.put(STATX, bytes(answer))
    line = format_syscall("statx", ((-100) & (2**64 - 1), NAME, 0x800, 0x800, STATX), 0, mem, 64)
    assert line.startswith('statx(AT_FDCWD, "busybox", AT_STATX_SYNC_AS_STAT|AT_NO_AUTOMOUNT, '
                           "STATX_BTIME, {stx_mask=STATX_ALL|STATX_MNT_ID, "), line


def test_timers_dirents_cpus_and_pending_signals():
    assert _line("setitimer", (0, TIMER, 0), 0) == (
        "setitimer(ITIMER_REAL, {it_interval={tv_sec=0, tv_usec=0}, it_value={tv_sec=0, "
        "tv_usec=10000}}, NULL) = 0")
    assert _line("getdents64", (3, DIRENTS, 32768), 72) == (
        "getdents64(3, 0x1500 /* 3 entries */, 32768) = 72")
    assert _line("sched_getaffinity", (0, 128, CPUS), 8) == "sched_getaffinity(0, 128, [0 1]) = 8"
    assert _line("rt_sigpending", (SIGSET, 8), 0) == "rt_sigpending([USR1], 8) = 0"
    assert _line("mremap", (0x7000, 4096, 8192, 1, 0), 0x9000) == (
        "mremap(0x7000, 4096, 8192, MREMAP_MAYMOVE) = 0x9000")


def test_restart_results_of_interrupted_calls():
    assert _line("rt_sigsuspend", (SIGSET, 8), -ERESTARTNOHAND) == (
        "rt_sigsuspend([USR1], 8) = ? ERESTARTNOHAND (To be restarted if no handler)")
    assert _line("pause", (), -ERESTARTNOHAND) == (
        "pause() = ? ERESTARTNOHAND (To be restarted if no handler)")


def test_sigreturn_mask_and_set_thread_area():
    """The client passes sigreturn the address of the frame's mask (the stack pointer plus
    SIGRETURN_MASK_OFFSET); set_thread_area's entry number is the kernel's answer."""
    mask = FRAME + SIGRETURN_MASK_OFFSET[("rt_sigreturn", 64)]
    assert _line("rt_sigreturn", (mask,), -EINTR) == (
        "rt_sigreturn({mask=[ALRM]}) = -1 EINTR (Interrupted system call)")
    assert _line("set_thread_area", (DESC,), 0, 32) == (
        "set_thread_area({entry_number=12, base_addr=0x18540, limit=0xfffff, seg_32bit=1, "
        "contents=0, read_exec_only=0, limit_in_pages=1, seg_not_present=0, useable=1}) = 0 "
        "(entry_number=12)")


@pytest.mark.parametrize("sig,info,text", [
    (14, {"code": 0x80}, "{si_signo=SIGALRM, si_code=SI_KERNEL}"),
    (11, {"code": 1, "addr": 0}, "{si_signo=SIGSEGV, si_code=SEGV_MAPERR, si_addr=NULL}"),
    (7, {"code": 2, "addr": 0x1000}, "{si_signo=SIGBUS, si_code=BUS_ADRERR, si_addr=0x1000}"),
    (8, {"code": 1, "addr": 0x401000}, "{si_signo=SIGFPE, si_code=FPE_INTDIV, si_addr=0x401000}"),
    (10, {"code": -6, "pid": 100}, "{si_signo=SIGUSR1, si_code=SI_TKILL, si_pid=100, si_uid=0}"),
    (17, {"code": 1, "pid": 101, "status": 0},
     "{si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid=101, si_uid=0, si_status=0, si_utime=0, "
     "si_stime=0}"),
    (17, {"code": 2, "pid": 102, "status": 13},
     "{si_signo=SIGCHLD, si_code=CLD_KILLED, si_pid=102, si_uid=0, si_status=SIGPIPE, "
     "si_utime=0, si_stime=0}"),
])
def test_siginfo_fields_per_signal_and_code(sig, info, text):
    assert format_siginfo(sig, info) == text


def test_a_siginfo_kept_as_its_bytes_is_read_at_the_abi_s_offsets():
    """sigqueue's and mq_notify's siginfo (kernel_model keeps the sender's bytes): si_pid,
    si_uid, and the sigval unless it is 0, at the i386 or the x86-64 offsets."""
    from kernel_model.signals.frame import pack_siginfo
    for bits in (32, 64):
        # pack_siginfo's `status` is the word after si_uid: the sigval's si_int
        queued = pack_siginfo(bits // 8, 34, -1, pid=101, uid=65534, status=-2)
        assert format_siginfo(34, {"raw": queued, "code": -1}, bits) == (
            "{si_signo=SIGRT_2, si_code=SI_QUEUE, si_pid=101, si_uid=65534, si_int=-2, "
            "si_ptr=0xfffffffe}")
        unvalued = pack_siginfo(bits // 8, 10, -3, pid=100, uid=0)
        assert format_siginfo(10, {"raw": unvalued, "code": -3}, bits) == \
            "{si_signo=SIGUSR1, si_code=SI_MESGQ, si_pid=100, si_uid=0}"
