"""The System V IPC structures as strace 6.1 prints them (ipc_msgctl.c, ipc_semctl.c,
ipc_shmctl.c, print_msgbuf.c, ipc_sem.c): the IPC_64 layouts of each ABI, which strace reads
from linux/{msg,sem,shm}.h (ipc_defs.h: msqid64_ds, semid64_ds, shmid64_ds, shminfo64), for
32-bit programs its m32 build of the same headers.

Layouts (include/uapi/asm-generic/ipcbuf.h, msgbuf.h, shmbuf.h; arch/x86/include/uapi/asm/
sembuf.h): struct ipc64_perm is key, uid, gid, cuid, cgid, mode (32-bit on x86-64, 16-bit and
padded on i386), seq, two longs; i386 splits each time in a low and a high word, of which
strace prints the low (the field it names). Field order and signedness follow strace's
PRINT_FIELD_U/D/ID: an id of -1 is shown as -1, a mode as octal.
"""
import struct

from kernel_model.debug.abi import flags

from . import xlat_style
from .strings import format_address, format_buffer, max_strlen, read_word

IPC_SET = 1
PERM = {64: struct.Struct("<iIIIII8x16x"), 32: struct.Struct("<iIIIIH2x4x8x")}
# after the perm: the fields strace prints, by name, in the structure's order
_TIME = {64: "Q", 32: "I4x"}           # i386: the low word, then the high one strace leaves
MSQID = {bits: (struct.Struct("<" + t * 3 + ("QQQii16x" if bits == 64 else "IIIii8x")),
                ("msg_stime", "msg_rtime", "msg_ctime", "msg_cbytes", "msg_qnum", "msg_qbytes",
                 "msg_lspid", "msg_lrpid")) for bits, t in _TIME.items()}
SEMID = {64: (struct.Struct("<Q8xQ8xQ16x"), ("sem_otime", "sem_ctime", "sem_nsems")),
         32: (struct.Struct("<I4xI4xI8x"), ("sem_otime", "sem_ctime", "sem_nsems"))}
SHMID = {bits: (struct.Struct("<" + ("Q" if bits == 64 else "I") + t * 3
                              + ("iiQ16x" if bits == 64 else "iiI8x")),
                ("shm_segsz", "shm_atime", "shm_dtime", "shm_ctime", "shm_cpid", "shm_lpid",
                 "shm_nattch")) for bits, t in _TIME.items()}
# The fields of each structure in strace's order (not the layout's), None: the perm.
MSQID_SHOWN = (None, "msg_stime", "msg_rtime", "msg_ctime", "msg_qnum", "msg_qbytes",
               "msg_lspid", "msg_lrpid")
SEMID_SHOWN = (None, "sem_otime", "sem_ctime", "sem_nsems")
SHMID_SHOWN = (None, "shm_segsz", "shm_cpid", "shm_lpid", "shm_nattch", "shm_atime",
               "shm_dtime", "shm_ctime")
# What IPC_SET takes, so all strace shows of it (the other fields are the caller's leftovers).
SET_FIELDS = {"msg_qbytes"}
# IPC_INFO and *_INFO's structures: (layout, fields), per ABI
MSGINFO = (struct.Struct("<7iH2x"), ("msgpool", "msgmap", "msgmax", "msgmnb", "msgmni",
                                     "msgssz", "msgtql", "msgseg"))
SEMINFO = (struct.Struct("<10i"), ("semmap", "semmni", "semmns", "semmnu", "semmsl", "semopm",
                                   "semume", "semusz", "semvmx", "semaem"))
SHMINFO64 = {64: struct.Struct("<5Q32x"), 32: struct.Struct("<5I16x")}
SHMINFO64_FIELDS = ("shmmax", "shmmin", "shmmni", "shmseg", "shmall")
SHM_INFO = {64: struct.Struct("<i4x5Q"), 32: struct.Struct("<i5I")}
SHM_INFO_FIELDS = ("used_ids", "shm_tot", "shm_rss", "shm_swp", "swap_attempts",
                   "swap_successes")

SEM_FLAGS = ((0x1000, "SEM_UNDO"), (0o4000, "IPC_NOWAIT"))
SEMBUF = struct.Struct("<HhH")


def _id(value: int) -> str:
    """PRINT_FIELD_ID: an unsigned id, but -1 (no id) as -1."""
    return "-1" if value == 0xFFFFFFFF else str(value)


def _perm(values: tuple, cmd: int) -> str:
    key, uid, gid, cuid, cgid, mode = values
    parts = [f"uid={_id(uid)}", f"gid={_id(gid)}", f"mode={flags.format_octal(mode)}"]
    if cmd != IPC_SET:
        parts += [f"key={key & 0xFFFFFFFF}", f"cuid={_id(cuid)}", f"cgid={_id(cgid)}"]
    return "{" + ", ".join(parts) + "}"


def format_ds(mem, addr: int, bits: int, cmd: int, kind: str) -> str | None:
    """msgctl's, semctl's or shmctl's struct (`kind` msg, sem or shm) at `addr`; None when it
    cannot be read (the caller prints the address its own way)."""
    layout, names = {"msg": MSQID, "sem": SEMID, "shm": SHMID}[kind][bits]
    shown = {"msg": MSQID_SHOWN, "sem": SEMID_SHOWN, "shm": SHMID_SHOWN}[kind]
    perm = PERM[bits]
    data = mem.read(addr, perm.size + layout.size) if addr else None
    if data is None or len(data) < perm.size + layout.size:
        return None
    fields = dict(zip(names, layout.unpack_from(data, perm.size)))
    parts = [f"{kind}_perm={_perm(perm.unpack_from(data), cmd)}"]
    parts += [f"{name}={fields[name]}" for name in shown[1:]
              if cmd != IPC_SET or name in SET_FIELDS]
    return "{" + ", ".join(parts) + "}"


def format_info(mem, addr: int, bits: int, kind: str) -> str | None:
    """IPC_INFO's and MSG_INFO/SEM_INFO/SHM_INFO's structures (`kind`: msginfo, seminfo,
    shminfo, shm_info); None when unreadable."""
    if kind == "shminfo":
        layout, names = SHMINFO64[bits], SHMINFO64_FIELDS
    elif kind == "shm_info":
        layout, names = SHM_INFO[bits], SHM_INFO_FIELDS
    else:
        layout, names = MSGINFO if kind == "msginfo" else SEMINFO
    data = mem.read(addr, layout.size) if addr else None
    if data is None or len(data) < layout.size:
        return None
    values = layout.unpack(data)
    return "{" + ", ".join(f"{name}={value}" for name, value in zip(names, values)) + "}"


def format_msgbuf(mem, addr: int, size: int, word: int) -> str:
    """`{mtype=1, mtext="hello"}`: a long, then `size` bytes of text (strace's printstrn, -s
    and -x apply); the address when the long cannot be read (strace reads struct msgbuf,
    the long and one byte, padded to a long)."""
    if not addr:
        return "NULL"
    mtype = read_word(mem, addr, word, signed=True)
    if mtype is None or mem.read(addr, 2 * word) is None:
        return format_address(addr)
    return f"{{mtype={mtype}, mtext={format_buffer(mem, addr + word, size)}}}"


def format_sembufs(mem, addr: int, count: int) -> str:
    """`[{sem_num=0, sem_op=-1, sem_flg=SEM_UNDO}, ...]` (strace's print_array: [] for none,
    the first -s N and `...` unless -v)."""
    if not addr:
        return "NULL"
    if count == 0:
        return "[]"
    shown = count if getattr(mem, "verbose", False) else min(count, max_strlen(mem))
    data = mem.read(addr, shown * SEMBUF.size)
    if data is None or len(data) < shown * SEMBUF.size:
        return format_address(addr)
    items = [f"{{sem_num={num}, sem_op={op}, sem_flg={xlat_style.flag_set(flg, SEM_FLAGS)}}}"
             for num, op, flg in SEMBUF.iter_unpack(data)]
    if shown < count:
        items.append("...")
    return "[" + ", ".join(items) + "]"
