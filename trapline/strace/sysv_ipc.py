"""The System V IPC calls as strace 6.1 prints them (ipc.c, ipc_msg.c, ipc_sem.c, ipc_shm.c,
ipc_msgctl.c, ipc_semctl.c, ipc_shmctl.c; the tables of src/xlat/ipc_private.in,
resource_flags.in, shm_resource_flags.in, ipc_msg_flags.in, semop_flags.in, shm_flags.in,
msgctl_flags.in, semctl_flags.in, shmctl_flags.in, ipccalls.in; values from
include/uapi/linux/ipc.h, msg.h, sem.h, shm.h).

i386's ipc(2) multiplexer is shown as the call it stands for, as socketcall is (syscall.c
decode_ipc_subcall): its arguments shifted by one (first, second, third, ptr, fifth), which each
decoder reads at the places the kernel does (ipc/syscall.c): msgsnd's buffer at ptr and its size
in second, semctl's union through ptr (shown in brackets), msgrcv's version 0 buffer and type in
the struct ipc_kludge at ptr, shmat's address returned through third.
"""
from kernel_model.debug.abi import flags

from . import structs, xlat_style
from .strings import format_address, read_word, read_words
from .sysv_ipc_structs import format_ds, format_info, format_msgbuf, format_sembufs

IPC_64 = 0x100
IPC_RMID, IPC_SET, IPC_STAT, IPC_INFO = 0, 1, 2, 3
RESOURCE_FLAGS = ((0o1000, "IPC_CREAT"), (0o2000, "IPC_EXCL"), (0o4000, "IPC_NOWAIT"))
SHM_RESOURCE_FLAGS = ((0o1000, "IPC_CREAT"), (0o2000, "IPC_EXCL"), (0o4000, "SHM_HUGETLB"),
                      (0o10000, "SHM_NORESERVE"))
SHM_HUGE_SHIFT, SHM_HUGE_MASK = 26, 0x3F
MSG_FLAGS = ((0o10000, "MSG_NOERROR"), (0o20000, "MSG_EXCEPT"), (0o40000, "MSG_COPY"),
             (0o4000, "IPC_NOWAIT"))
SHM_FLAGS = ((0o10000, "SHM_RDONLY"), (0o20000, "SHM_RND"), (0o40000, "SHM_REMAP"),
             (0o100000, "SHM_EXEC"))
_COMMON = {IPC_RMID: "IPC_RMID", IPC_SET: "IPC_SET", IPC_STAT: "IPC_STAT", IPC_INFO: "IPC_INFO"}
MSGCTL_COMMANDS = {**_COMMON, 11: "MSG_STAT", 12: "MSG_INFO", 13: "MSG_STAT_ANY"}
SEMCTL_COMMANDS = {**_COMMON, 11: "GETPID", 12: "GETVAL", 13: "GETALL", 14: "GETNCNT",
                   15: "GETZCNT", 16: "SETVAL", 17: "SETALL", 18: "SEM_STAT", 19: "SEM_INFO",
                   20: "SEM_STAT_ANY"}
SHMCTL_COMMANDS = {**_COMMON, 11: "SHM_LOCK", 12: "SHM_UNLOCK", 13: "SHM_STAT", 14: "SHM_INFO",
                   15: "SHM_STAT_ANY"}
# Per kind: the commands whose structure the kernel fills in (decoded at the exit), and which
# info structure IPC_INFO and the kind's *_INFO fill.
_STAT = {"msg": {IPC_STAT, 11, 13}, "sem": {IPC_STAT, 18, 20}, "shm": {IPC_STAT, 13, 15}}
_INFO = {"msg": {IPC_INFO: "msginfo", 12: "msginfo"}, "sem": {IPC_INFO: "seminfo", 19: "seminfo"},
         "shm": {IPC_INFO: "shminfo", 14: "shm_info"}}

# ipc(2)'s calls (include/uapi/linux/ipc.h SEMOP...SHMCTL) and how many arguments strace's
# table gives each subcall (linux/generic/subcallent.h).
SUBCALLS = {1: ("semop", 4), 2: ("semget", 3), 3: ("semctl", 4), 4: ("semtimedop", 5),
            11: ("msgsnd", 4), 12: ("msgrcv", 5), 13: ("msgget", 2), 14: ("msgctl", 4),
            21: ("shmat", 4), 22: ("shmdt", 4), 23: ("shmget", 3), 24: ("shmctl", 4)}


class IpcSubcall(tuple):
    """An ipc(2) subcall's arguments as strace shifts them (u_arg[i] = u_arg[i + 1]), with the
    version the call number's high 16 bits carry (msgrcv's 0 passes struct ipc_kludge)."""
    version = 0

    def __new__(cls, values, version: int = 0):
        made = super().__new__(cls, values)
        made.version = version
        return made


def demultiplexed(name: str, args, bits: int):
    """(name, args) of the call an i386 ipc(2) stands for; ipc itself for an unknown call."""
    if name != "ipc" or bits != 32 or not args:
        return name, args
    number = args[0] & 0xFFFFFFFF
    target = SUBCALLS.get(number & 0xFFFF)
    if target is None:
        return name, args
    shifted = [value & 0xFFFFFFFF for value in args[1:1 + target[1]]]
    return target[0], IpcSubcall(shifted + [0] * (target[1] - len(shifted)), number >> 16)


def indirect(call) -> bool:
    return isinstance(call.args, IpcSubcall)


def _int(value: int) -> str:
    value &= 0xFFFFFFFF
    return str(value - (1 << 32) if value >> 31 else value)


def _long(call, value: int) -> str:
    value &= (1 << call.bits) - 1
    return str(value - (1 << call.bits) if value >> (call.bits - 1) else value)


def _key(value: int) -> str:
    value &= 0xFFFFFFFF
    return xlat_style.named(value, "IPC_PRIVATE" if value == 0 else flags.format_hex(value))


def _with_mode(flag_text: str, value: int) -> str:
    """strace's `IPC_CREAT|0600`: the flags (none: nothing), then the mode in octal."""
    mode = flags.format_octal(value & 0o777)
    return f"{flag_text}|{mode}" if flag_text else mode


def _flags_if_any(value: int, table) -> str:
    return xlat_style.flag_set(value, table) if value else ""


def _resource(value: int) -> str:
    value &= 0xFFFFFFFF
    return _with_mode(_flags_if_any(value & ~0o777, RESOURCE_FLAGS), value)


def _shm_resource(value: int) -> str:
    """shmget's flags: the huge page size's log2 as `N<<SHM_HUGE_SHIFT` among them."""
    value &= 0xFFFFFFFF
    rest = value & ~0o777 & ~(SHM_HUGE_MASK << SHM_HUGE_SHIFT)
    huge = value >> SHM_HUGE_SHIFT & SHM_HUGE_MASK
    parts = [_flags_if_any(rest, SHM_RESOURCE_FLAGS)] if rest else []
    if huge:
        parts.append(f"{huge}<<{xlat_style.named(SHM_HUGE_SHIFT, 'SHM_HUGE_SHIFT', '26')}")
    return _with_mode("|".join(parts), value)


def _command(value: int, table: dict, prefix: str) -> str:
    """PRINTCTL: `IPC_64|IPC_STAT` (i386's multiplexer passes IPC_64, the direct calls not)."""
    value &= 0xFFFFFFFF
    text = xlat_style.enum(value & ~IPC_64, table, prefix)
    return f"{xlat_style.named(IPC_64, 'IPC_64')}|{text}" if value & IPC_64 else text


def _picked(call, direct: tuple, shifted: tuple) -> list[int]:
    return [call.arg(i) for i in (shifted if indirect(call) else direct)]


# ---- the get calls ------------------------------------------------------------------------

def msgget_args(call) -> list[str]:
    return [_key(call.arg(0)), _resource(call.arg(1))]


def semget_args(call) -> list[str]:
    return [_key(call.arg(0)), _int(call.arg(1)), _resource(call.arg(2))]


def shmget_args(call) -> list[str]:
    return [_key(call.arg(0)), str(call.arg(1)), _shm_resource(call.arg(2))]


# ---- messages ------------------------------------------------------------------------------

def msgsnd_args(call) -> list[str]:
    msqid, msgp, size, msgflg = _picked(call, (0, 1, 2, 3), (0, 3, 1, 2))
    return [_int(msqid), format_msgbuf(call.mem, msgp, size, call.word), str(size),
            xlat_style.flag_set(msgflg & 0xFFFFFFFF, MSG_FLAGS)]


def _received(call, msgp: int, size: int) -> str:
    """msgrcv's buffer, read at the exit: its address if the call failed."""
    return format_address(msgp) if call.failed or not msgp else format_msgbuf(
        call.mem, msgp, size, call.word)


def msgrcv_args(call) -> list[str]:
    """With ipc(2)'s version 0 the buffer and the type are a struct ipc_kludge at ptr: if it
    cannot be read (or the call failed) strace shows its address and no type."""
    msgflg = xlat_style.flag_set(call.arg(2 if indirect(call) else 4) & 0xFFFFFFFF, MSG_FLAGS)
    if indirect(call) and call.args.version == 0:
        pair = None if call.failed else read_words(call.mem, call.arg(3), call.word, 2)
        if pair is None:
            return [_int(call.arg(0)), format_address(call.arg(3)), str(call.arg(1)), msgflg]
        return [_int(call.arg(0)), _received(call, pair[0], call.arg(1)), str(call.arg(1)),
                _int(pair[1]), msgflg]
    msqid, msgp, size, msgtyp = _picked(call, (0, 1, 2, 3), (0, 3, 1, 4))
    return [_int(msqid), _received(call, msgp, size), str(size), _long(call, msgtyp), msgflg]


def _control_buffer(call, kind: str, cmd: int, addr: int) -> str:
    """The ctl calls' structure: IPC_SET's as given (read at the entry, so even if the call
    failed), the *_STAT and *_INFO ones once the kernel filled them, else the address."""
    cmd &= ~IPC_64 & 0xFFFFFFFF
    text = None
    if cmd == IPC_SET:
        text = format_ds(call.mem, addr, call.bits, cmd, kind)
    elif not call.failed and cmd in _STAT[kind]:
        text = format_ds(call.mem, addr, call.bits, cmd, kind)
    elif not call.failed and cmd in _INFO[kind]:
        text = format_info(call.mem, addr, call.bits, _INFO[kind][cmd])
    return format_address(addr) if text is None else text


def msgctl_args(call) -> list[str]:
    cmd, addr = call.arg(1), call.arg(3 if indirect(call) else 2)
    return [_int(call.arg(0)), _command(cmd, MSGCTL_COMMANDS, "MSG_"),
            _control_buffer(call, "msg", cmd, addr)]


# ---- semaphores ----------------------------------------------------------------------------

def semop_args(call) -> list[str]:
    semid, sops, nsops = _picked(call, (0, 1, 2), (0, 3, 1))
    nsops &= 0xFFFFFFFF
    return [_int(semid), format_sembufs(call.mem, sops, nsops), str(nsops)]


def semtimedop_args(call) -> list[str]:
    """The timeout is i386's old timespec through ipc(2), a 64-bit one otherwise."""
    timeout = call.arg(4 if indirect(call) else 3)
    field = 4 if indirect(call) else 8
    return semop_args(call) + [structs.format_timespec(call.mem, timeout, field)]


def semctl_args(call) -> list[str]:
    """The fourth argument is union semun; through ipc(2) a pointer to it, whose value is
    shown in brackets (its address alone if it cannot be read)."""
    cmd = call.arg(2)
    texts = [_int(call.arg(0)), _int(call.arg(1)), _command(cmd, SEMCTL_COMMANDS, "SEM_")]
    addr = call.arg(3)
    if indirect(call):
        addr = read_word(call.mem, call.arg(3), call.word) if call.arg(3) else None
        if addr is None:
            return texts + [format_address(call.arg(3))]
    bare = cmd & ~IPC_64 & 0xFFFFFFFF
    if bare in _INFO["sem"]:            # (its address bare when it failed: print_seminfo)
        return texts + [_control_buffer(call, "sem", cmd, addr)]
    text = None
    if bare == IPC_SET or (bare in _STAT["sem"] and not call.failed):
        text = format_ds(call.mem, addr, call.bits, bare, "sem")
    if text is None:
        text = f"[{format_address(addr)}]" if indirect(call) else format_address(addr)
    return texts + [text]


# ---- shared memory -------------------------------------------------------------------------

def shmat_args(call) -> list[str]:
    shmid, shmaddr, shmflg = _picked(call, (0, 1, 2), (0, 3, 1))
    return [_int(shmid), format_address(shmaddr),
            xlat_style.flag_set(shmflg & 0xFFFFFFFF, SHM_FLAGS)]


def shmdt_args(call) -> list[str]:
    return [format_address(call.arg(3 if indirect(call) else 0))]


def shmctl_args(call) -> list[str]:
    cmd, addr = call.arg(1), call.arg(3 if indirect(call) else 2)
    return [_int(call.arg(0)), _command(cmd, SHMCTL_COMMANDS, "SHM_"),
            _control_buffer(call, "shm", cmd, addr)]


def indirect_shmat_return(call) -> str | None:
    """shmat through ipc(2) returns 0 and the address through third: strace shows that
    address as the result (in hex); None when the call failed or it cannot be read."""
    if call.name != "shmat" or not indirect(call) or call.failed:
        return None
    address = read_word(call.mem, call.arg(2), call.word)
    return None if address is None else flags.format_hex(address)


# ---- ipc(2) itself, for a call it does not know --------------------------------------------

def ipc_call(call, index, value) -> str:
    """`99`, or `1<<16|99` with a version (ipc.c: the call by name, which a known one has)."""
    version, number = value >> 16 & 0xFFFF, value & 0xFFFF
    return (f"{version}<<16|" if version else "") + str(number)


OVERRIDES = {("ipc", 0): ipc_call,
             **{("ipc", i): lambda call, index, value: flags.format_hex(value) for i in range(1, 6)}}

DECODERS = {"msgget": msgget_args, "semget": semget_args, "shmget": shmget_args,
            "msgsnd": msgsnd_args, "msgrcv": msgrcv_args, "msgctl": msgctl_args,
            "semop": semop_args, "semtimedop": semtimedop_args,
            "semtimedop_time64": semtimedop_args, "semctl": semctl_args,
            "shmat": shmat_args, "shmdt": shmdt_args, "shmctl": shmctl_args}


def entry_count(name: str, args, shown: int) -> int:
    """How many arguments strace prints at the entry: msgrcv's queue alone, and a ctl call's
    structure the kernel fills in (the *_STAT and *_INFO commands) after the command."""
    if name == "msgrcv":
        return min(1, shown)
    kind = {"msgctl": "msg", "semctl": "sem", "shmctl": "shm"}.get(name)
    if kind is None:
        return shown
    at = 2 if kind == "sem" else 1
    cmd = (args[at] if at < len(args) else 0) & ~IPC_64 & 0xFFFFFFFF
    return min(at + 1, shown) if cmd in _STAT[kind] or cmd in _INFO[kind] else shown
