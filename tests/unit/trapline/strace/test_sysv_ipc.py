"""System V IPC calls as strace 6.1 prints them (sysv_ipc.py, sysv_ipc_structs.py), beyond what
the sysv_ipc sample's comparison shows: each expected text is Debian's strace 6.1 output for
the same call, made by a glibc program on the host (-m64, and -m32 for the IPC_64 forms and
i386's ipc(2)) in a new IPC namespace: the info structures, shmget's huge page size, an
unknown command, a failed IPC_SET (shown as given) and IPC_STAT (its address), a long sembuf
array, ipc(2) for a call it does not know, msgrcv's version 1 and 0 (the kludge's address and
no type when it fails), semctl's union pointer that cannot be read."""
import struct

from trapline.strace.syscall_line import entry_arguments, format_syscall
from tests.unit.trapline.strace.fake_memory import FakeMemory

B = 0x4000
MSGINFO = struct.pack("<7iH2x", 512000, 16384, 8192, 16384, 32000, 16, 16384, 65535)
MSGINFO_TEXT = ("{msgpool=512000, msgmap=16384, msgmax=8192, msgmnb=16384, msgmni=32000, "
                "msgssz=16, msgtql=16384, msgseg=65535}")
SEMINFO = struct.pack("<10i", 1024000000, 32000, 1024000000, 1024000000, 32000, 500, 500, 20,
                      32767, 32767)
ENOMEM, ENOENT, EINVAL, EFAULT, ENOSYS = -12, -2, -22, -14, -38


def _line(name, args, ret, regions=None, bits=64):
    return format_syscall(name, args, ret, FakeMemory(regions or {}), bits)


def test_the_info_structures():
    assert _line("msgctl", (0, 3, B), 0, {B: MSGINFO}) == f"msgctl(0, IPC_INFO, {MSGINFO_TEXT}) = 0"
    assert _line("msgctl", (0, 0x103, B), 0, {B: MSGINFO}, 32) == \
        f"msgctl(0, IPC_64|IPC_INFO, {MSGINFO_TEXT}) = 0"
    assert _line("semctl", (0, 0, 3, B), 0, {B: SEMINFO}) == (
        "semctl(0, 0, IPC_INFO, {semmap=1024000000, semmni=32000, semmns=1024000000, "
        "semmnu=1024000000, semmsl=32000, semopm=500, semume=500, semusz=20, semvmx=32767, "
        "semaem=32767}) = 0")
    shminfo = struct.pack("<5Q32x", 18446744073692774399, 1, 4096, 4096, 18446744073692774399)
    assert _line("shmctl", (0, 3, B), 0, {B: shminfo}) == (
        "shmctl(0, IPC_INFO, {shmmax=18446744073692774399, shmmin=1, shmmni=4096, shmseg=4096, "
        "shmall=18446744073692774399}) = 0")
    shminfo32 = struct.pack("<5I16x", 2147483647, 1, 4096, 4096, 4278190079)
    assert _line("shmctl", (0, 0x103, B), 0, {B: shminfo32}, 32) == (
        "shmctl(0, IPC_64|IPC_INFO, {shmmax=2147483647, shmmin=1, shmmni=4096, shmseg=4096, "
        "shmall=4278190079}) = 0")
    zeros = ("{used_ids=0, shm_tot=0, shm_rss=0, shm_swp=0, swap_attempts=0, "
             "swap_successes=0}")
    assert _line("shmctl", (0, 14, B), 0, {B: bytes(48)}) == f"shmctl(0, SHM_INFO, {zeros}) = 0"
    assert _line("shmctl", (0, 0x10e, B), 0, {B: bytes(24)}, 32) == \
        f"shmctl(0, IPC_64|SHM_INFO, {zeros}) = 0"


def test_shmget_names_the_huge_page_size():
    huge = 21 << 26
    assert _line("shmget", (0x1234, 4096, 0o4000 | huge | 0o1000 | 0o600), ENOMEM) == (
        "shmget(0x1234, 4096, IPC_CREAT|SHM_HUGETLB|21<<SHM_HUGE_SHIFT|0600) = -1 ENOMEM "
        "(Cannot allocate memory)")
    assert _line("shmget", (0x1234, 4096, huge | 0o600), ENOENT) == (
        "shmget(0x1234, 4096, 21<<SHM_HUGE_SHIFT|0600) = -1 ENOENT (No such file or directory)")


def test_commands_and_their_structures_when_the_call_fails():
    """IPC_SET's structure is decoded at the entry, so shown whatever the result; IPC_STAT's
    at the exit, so a failed one shows its address."""
    assert _line("msgctl", (12345, 99, 0), EINVAL) == \
        "msgctl(12345, 0x63 /* MSG_??? */, NULL) = -1 EINVAL (Invalid argument)"
    given = "{msg_perm={uid=0, gid=0, mode=000}, msg_qbytes=0}"
    assert _line("msgctl", (12345, 1, B), EINVAL, {B: bytes(120)}) == \
        f"msgctl(12345, IPC_SET, {given}) = -1 EINVAL (Invalid argument)"
    assert _line("msgctl", (12345, 0x101, B), EINVAL, {B: bytes(88)}, 32) == \
        f"msgctl(12345, IPC_64|IPC_SET, {given}) = -1 EINVAL (Invalid argument)"
    assert _line("msgctl", (12345, 2, B), EINVAL, {B: bytes(120)}) == \
        "msgctl(12345, IPC_STAT, 0x4000) = -1 EINVAL (Invalid argument)"


def test_a_long_sembuf_array_is_abbreviated():
    line = _line("semtimedop", (12345, B, 40, 0), EINVAL, {B: bytes(240)})
    one = "{sem_num=0, sem_op=0, sem_flg=0}"
    assert line == ("semtimedop(12345, [" + ", ".join([one] * 32) + ", ...], 40, NULL) = -1 "
                    "EINVAL (Invalid argument)")


def test_ipc_subcalls_strace_reads_through_their_pointers():
    assert _line("ipc", (99, 1, 2, 3, 4, 5), ENOSYS, bits=32) == \
        "ipc(99, 0x1, 0x2, 0x3, 0x4, 0x5) = -1 ENOSYS (Function not implemented)"
    assert _line("ipc", (0x1000c, 12345, 64, 0, B, 7), EINVAL, {B: bytes(72)}, 32) == \
        "msgrcv(12345, 0x4000, 64, 7, 0) = -1 EINVAL (Invalid argument)"
    assert _line("ipc", (12, 12345, 64, 0, 0x10, 0), EFAULT, bits=32) == \
        "msgrcv(12345, 0x10, 64, 0) = -1 EFAULT (Bad address)"
    assert _line("ipc", (3, 12345, 0, 0x102, 0x10, 0), EFAULT, bits=32) == \
        "semctl(12345, 0, IPC_64|IPC_STAT, 0x10) = -1 EFAULT (Bad address)"
    union = {B: struct.pack("<I", 0x10)}        # (a union whose buffer is not the caller's)
    assert _line("ipc", (3, 0, 0, 0x103, B, 0), EFAULT, union, 32) == \
        "semctl(0, 0, IPC_64|IPC_INFO, 0x10) = -1 EFAULT (Bad address)"
    assert _line("ipc", (3, 0, 0, 0x102, B, 0), EINVAL, union, 32) == \
        "semctl(0, 0, IPC_64|IPC_STAT, [0x10]) = -1 EINVAL (Invalid argument)"


def test_shmat_through_ipc_returns_the_address_it_wrote():
    """ipc(SHMAT) returns 0 and the address through `third`; strace shows that address."""
    regions = {B: struct.pack("<I", 0xF7FF4000)}
    assert _line("ipc", (21, 0, 0o10000, B, 0, 0), 0, regions, 32) == \
        "shmat(0, NULL, SHM_RDONLY) = 0xf7ff4000"
    assert _line("ipc", (21, 0, 0, B, 0, 0), EINVAL, regions, 32) == \
        "shmat(0, NULL, 0) = -1 EINVAL (Invalid argument)"


def test_what_is_printed_at_the_entry():
    """Under -f a call another task interrupts shows what strace printed at its entry:
    msgrcv's queue, a ctl call's command before a structure the kernel fills in."""
    assert entry_arguments("msgrcv", 64, 5) == 1
    assert entry_arguments("msgctl", 64, 3, (0, 2, B)) == 2
    assert entry_arguments("msgctl", 64, 3, (0, 1, B)) == 3
    assert entry_arguments("semctl", 32, 4, (0, 0, 0x102, B)) == 3
    assert entry_arguments("semop", 64, 3, (0, B, 1)) == 3


def test_raw_arguments_and_a_restart_code_as_a_plain_error():
    """-e raw=msgrcv (Debian strace 6.1 on the sysv_ipc sample, i386): ipc(2)'s subcall with
    the arguments strace shifts, as many as its subcall table gives msgrcv (5), and the sleep
    a handled SIGALRM ended shown as an error like any other (syscall.c's raw branch: no `?`,
    and libc has no message for the kernel's 514)."""
    mem = FakeMemory({B: struct.pack("<II", B + 8, 0)})
    mem.raw = True
    assert format_syscall("ipc", (12, 0, 64, 0, B, 0), -514, mem, 32) == \
        "msgrcv(0, 0x40, 0, 0x4000, 0) = -1 ERESTARTNOHAND (Unknown error 514)"
    assert format_syscall("pause", (), -514, mem, 64) == \
        "pause() = -1 ERESTARTNOHAND (Unknown error 514)"
