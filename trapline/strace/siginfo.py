"""A signal's line as strace 6.x prints it: `--- SIGCHLD {si_signo=SIGCHLD, si_code=CLD_EXITED,
si_pid=101, si_uid=0, si_status=0, si_utime=0, si_stime=0} ---` (strace's printsiginfo).

Which fields follow si_code depends on the code and the signal: a sender's pid and uid for a
process's si_code (SI_USER, SI_TKILL; SI_QUEUE, SI_MESGQ... with their sigval when it is not 0),
the fault address for the fault signals, the child's pid, status and times for SIGCHLD, nothing
more for a kernel-sent SIGALRM. The names are kernel_model/flags.py's. A siginfo kept as its
bytes (sigqueue's own, mq_notify's: "raw") is read at the tracee's ABI's offsets.
"""
import struct

from kernel_model.debug.abi import flags

from . import xlat_style
from .strings import format_address

SI_USER, SI_QUEUE, SI_TIMER, SI_TKILL = 0, -1, -2, -6
SIGCHLD = 17
CLD_EXITED = 1


def si_code_name(sig: int, code: int) -> str:
    if code > 0 and code != 0x80:
        name = flags.SIGNAL_SI_CODES.get(sig, {}).get(code)
    else:
        name = flags.SI_CODES.get(code)
    if name is None:
        return str(code)
    return xlat_style.named(code, name, flags.format_hex(code & 0xffffffff))   # SI_TKILL: 0xfffffffa


def _sender(info: dict, bits: int) -> tuple[int, int, int]:
    """si_pid, si_uid and the sigval (the pointer's width) of a process's siginfo."""
    raw = info.get("raw")
    if raw is None:
        return info.get("pid", 0), info.get("uid", 0), 0
    at = 16 if bits == 64 else 12          # past si_signo, si_errno, si_code (and padding)
    pid, uid = struct.unpack_from("<iI", raw, at)
    return pid, uid, struct.unpack_from("<Q" if bits == 64 else "<I", raw, at + 8)[0]


def format_siginfo(sig: int, info: dict, bits: int = 64) -> str:
    raw = info.get("raw")
    code = info.get("code", 0) if raw is None else struct.unpack_from("<i", raw, 8)[0]
    fields = [f"si_signo={xlat_style.signal(sig)}", f"si_code={si_code_name(sig, code)}"]
    if code <= 0 and code != SI_TIMER:
        # strace's print_si_info for SI_FROMUSER: printsigsource, then printsigval when
        # si_ptr is not NULL, except for kill's and tkill's codes
        pid, uid, value = _sender(info, bits)
        fields += [f"si_pid={pid}", f"si_uid={uid}"]
        if value and code not in (SI_USER, SI_TKILL):
            sival_int = struct.unpack("<i", struct.pack("<I", value & 0xFFFFFFFF))[0]
            fields += [f"si_int={sival_int}", f"si_ptr={value:#x}"]
    elif sig in flags.FAULT_SIGNALS and (code > 0 or "addr" in info):
        fields.append(f"si_addr={format_address(info.get('addr', 0))}")
    elif sig == SIGCHLD and code > 0 and code != 0x80:
        status = info.get("status", 0)
        # a signal for every code but CLD_EXITED's exit status (strace's printsigchld)
        shown = str(status) if code == CLD_EXITED else xlat_style.signal(status)
        fields += [f"si_pid={info.get('pid', 0)}", f"si_uid={info.get('uid', 0)}",
                   f"si_status={shown}", f"si_utime={info.get('utime', 0)}",
                   f"si_stime={info.get('stime', 0)}"]
    return "{" + ", ".join(fields) + "}"


def read_siginfo(mem, addr: int, word: int) -> str | None:
    """A siginfo_t the kernel wrote in memory, as format_siginfo prints it (strace's
    printsiginfo_at): si_signo, si_errno, si_code, then the union, 8-byte aligned on x86-64
    (include/uapi/asm-generic/siginfo.h: the sender's pid and uid, a fault's address, or a
    child's pid, uid, status and clock_t times). None when it cannot be read."""
    union = 16 if word == 8 else 12
    size = union + (32 if word == 8 else 20)         # up to si_stime
    data = mem.read(addr, size)
    if data is None or len(data) < size:
        return None
    sig, _errno, code = struct.unpack_from("<iii", data)
    pid, uid, status = struct.unpack_from("<iIi", data, union)
    at = union + (16 if word == 8 else 12)          # clock_t si_utime, si_stime: longs
    times = struct.unpack_from("<qq" if word == 8 else "<ii", data, at)
    info = {"code": code, "pid": pid, "uid": uid, "status": status, "utime": times[0],
            "stime": times[1], "addr": int.from_bytes(data[union:union + word], "little")}
    return format_siginfo(sig, info)
