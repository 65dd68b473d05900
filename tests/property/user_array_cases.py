"""Calls that read arrays from user memory, as symbolic cases run twice: in the sandbox's guest
(tests/property/syscall_fuzz_guest.py) and natively on the host's Linux, in a forked child laid
out the same way; the host's answer is what the sandbox must give (issue 26).

A pointer is symbolic, ("data", offset) into the read-write data segment of DATA_SIZE bytes
that ends at an unmapped page (so offsets near the end straddle it), ("ro", offset) into a
read-only page, ("unmapped",) or ("null",), and each side turns it into its own address. The
array a call points at lives at the struct zone's offset on both sides, built from the same
symbolic entries; the rest of the data segment holds the same bytes (DATA, with the prelude's
pipe fds at SCRATCH). On each side fd 3 is a copy of the same file opened O_RDWR, fd 5 and 6
the ends of an empty pipe, fd 7 /dev/null, as the guest's prelude opens them.

An x86-64 case is a syscall; an i386 case is `int 0x80` with the i386 table from this 64-bit
process (IA32 emulation), its memory mapped below 4 GiB (MAP_32BIT), the layouts those of the
32-bit ABI (an 8-byte iovec): Linux's compat answer is the oracle of the sandbox's i386 ABI. A
negative value stands for the C value -1 in the ABI's word.
"""
import ctypes
import mmap
import os
import pickle
import resource
import struct

from .syscall_fuzz_guest import DATA, DATA_SIZE, DATA_VADDR, RO_VADDR, SCRATCH, STRUCT_ZONE, UNMAPPED

ZONE_OFFSET = STRUCT_ZONE - DATA_VADDR
FILE_BYTES = b"hello\n" * 100          # the rootfs's /f (make_rootfs)


def data_with(zone: bytes) -> bytes:
    """The data segment as the call meets it: DATA with the zone and the prelude's pipe fds."""
    data = bytearray(DATA)
    data[ZONE_OFFSET:ZONE_OFFSET + len(zone)] = zone
    data[SCRATCH - DATA_VADDR:SCRATCH - DATA_VADDR + 8] = struct.pack("<ii", 5, 6)
    return bytes(data)


class Places:
    """Where the symbolic pointers are on one side."""

    def __init__(self, data: int, ro: int, unmapped: int, word: int):
        self.data, self.ro, self.unmapped, self.word = data, ro, unmapped, word

    def address(self, pointer) -> int:
        kind = pointer[0]
        if kind == "data":
            return self.data + pointer[1]
        if kind == "ro":
            return self.ro + pointer[1]
        return self.unmapped if kind == "unmapped" else 0

    def value(self, value) -> int:
        """An argument or field: a symbolic pointer, or an int (negative: in the ABI's word)."""
        if isinstance(value, tuple):
            return self.address(value)
        return value & ((1 << (8 * self.word)) - 1)


GUEST = {"i386": Places(DATA_VADDR, RO_VADDR, UNMAPPED, 4),
         "x86_64": Places(DATA_VADDR, RO_VADDR, UNMAPPED, 8)}


def zone_bytes(places: Places, case) -> bytes:
    """The struct zone's bytes for `case` = (call, args, entries): entries are the words of
    the array at the zone (an iovec's base and length, a pollfd's fields...)."""
    call, _, entries = case
    word = "I" if places.word == 4 else "Q"
    out = bytearray()
    for entry in entries:
        if call in ("readv", "writev"):
            base, length = entry
            out += struct.pack(f"<{word}{word}", places.value(base), places.value(length))
        elif call == "poll":
            fd, events = entry
            out += struct.pack("<ihh", fd, events, 0)
        elif "groups" in call:                  # gids, 16-bit for i386's getgroups/setgroups
            out += struct.pack("<H" if not call.endswith("32") and places.word == 4 else "<I",
                               entry)
        else:                                   # select's fd_sets, a sigset: raw bytes
            out += entry
    return bytes(out)


def guest_args(arch: str, case) -> tuple[int, ...]:
    places = GUEST[arch]
    args = [places.value(a) for a in case[1]]
    return tuple(args + [0] * (6 - len(args)))


# ---- the host side ---------------------------------------------------------------------------
HOST_NUMBERS = {"x86_64": {"readv": 19, "writev": 20, "poll": 7, "select": 23, "getgroups": 115,
                           "setgroups": 116, "rt_sigprocmask": 14},
                "i386": {"readv": 145, "writev": 146, "poll": 168, "select": 142, "getgroups": 80,
                         "setgroups": 81, "getgroups32": 205, "setgroups32": 206,
                         "rt_sigprocmask": 175}}
# A case's call by the name the sandbox gives it on each ABI (i386's select is _newselect: its
# call 82 is old_select, one pointer to a struct of the five arguments)
GUEST_NAMES = {"x86_64": {}, "i386": {"select": "_newselect"}}
OUT_FD = 63                  # the host child's answer pipe: closed in the guest, below 64
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int,
                       ctypes.c_int, ctypes.c_long)
_libc.munmap.argtypes = (ctypes.c_void_p, ctypes.c_size_t)
_libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
MAP_32BIT = 0x40             # below 2 GiB: addresses an i386 call can pass
PAGE = mmap.PAGESIZE

# The i386 ABI from this x86-64 process: `int 0x80` takes the i386 table with its arguments in
# ebx, ecx, edx, esi, edi, ebp (IA32 emulation, arch/x86/entry/entry_64_compat.S), as the
# guest's int 0x80 calls do. A C function (number, a1..a6) in the SysV registers (rdi, rsi,
# rdx, rcx, r8, r9, the sixth on the stack) moved into them; the result sign-extended.
INT80_STUB = bytes((0x53, 0x55,                 # push rbx; push rbp
                    0x89, 0xF8,                 # mov eax, edi
                    0x89, 0xF3,                 # mov ebx, esi
                    0x87, 0xD1,                 # xchg ecx, edx
                    0x44, 0x89, 0xC6,           # mov esi, r8d
                    0x44, 0x89, 0xCF,           # mov edi, r9d
                    0x8B, 0x6C, 0x24, 0x18,     # mov ebp, [rsp+0x18]
                    0xCD, 0x80,                 # int 0x80
                    0x5D, 0x5B,                 # pop rbp; pop rbx
                    0x48, 0x63, 0xC0,           # movsxd rax, eax
                    0xC3))                      # ret


def _map(size: int, low: bool) -> int:
    flags = mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | (MAP_32BIT if low else 0)
    address = _libc.mmap(None, size, mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC, flags,
                         -1, 0)
    assert address not in (None, ctypes.c_void_p(-1).value), "mmap failed"
    return address


def _host_layout(low: bool) -> Places:
    """DATA_SIZE read-write bytes then an unmapped page; a read-only page; an unmapped page
    (below 4 GiB for an i386 call)."""
    base = _map(DATA_SIZE + 3 * PAGE, low)
    ro = base + DATA_SIZE + PAGE
    _libc.munmap(base + DATA_SIZE, PAGE)
    _libc.munmap(ro + PAGE, PAGE)
    ctypes.memmove(ro, b"A" * 0x41, 0x41)          # the guest's read-only page (elf())
    _libc.mprotect(ro, PAGE, mmap.PROT_READ)
    return Places(base, ro, base + DATA_SIZE, 8 if not low else 4)


def _host_call(arch: str, nr: int, args: list[int]) -> int:
    if arch == "x86_64":
        result = _libc.syscall(ctypes.c_long(nr), *[ctypes.c_long(a) for a in args])
        return result if result >= 0 else -ctypes.get_errno()
    code = _map(PAGE, True)
    ctypes.memmove(code, INT80_STUB, len(INT80_STUB))
    stub = ctypes.CFUNCTYPE(ctypes.c_long, *[ctypes.c_long] * 7)(code)
    return stub(nr, *(list(args) + [0] * 6)[:6])


def _host_child(arch: str, case, file_path: str, out_fd: int) -> None:
    places = _host_layout(arch == "i386")
    ctypes.memmove(places.data, data_with(zone_bytes(places, case)), DATA_SIZE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (1024, 1024))   # the sandbox's RLIMIT_NOFILE
    os.dup2(out_fd, OUT_FD)
    fd = os.open(file_path, os.O_RDWR)
    folder = os.open(os.path.dirname(file_path), os.O_RDONLY | os.O_DIRECTORY)
    read_end, write_end = os.pipe()
    null = os.open("/dev/null", os.O_RDWR)
    for want, have in ((3, fd), (4, folder), (5, read_end), (6, write_end), (7, null)):
        if want != have:
            os.dup2(have, want)
    # The guest's fd table is a new process's (64 slots: select cuts nfds to it); this one
    # was copied from pytest's, which may hold higher fds. A child of a process with fds up to
    # 63 only gets a table of 64 (fs/file.c dup_fd), so the call runs in a grandchild.
    os.closerange(8, OUT_FD)
    os.closerange(OUT_FD + 1, 1 << 20)
    if os.fork():
        os.wait()
        return
    try:
        answer = _host_call(arch, HOST_NUMBERS[arch][case[0]], [places.value(a) for a in case[1]])
        data = ctypes.string_at(places.data, DATA_SIZE)
        os.write(OUT_FD, pickle.dumps((answer, data)))
    finally:
        os._exit(0)


def run_on_host(arch: str, case, tmp_dir) -> tuple[int, bytes, bytes]:
    """The host's answer to `case` (result or -errno), the data segment and the file after it."""
    path = os.path.join(tmp_dir, "host_f")
    with open(path, "wb") as f:
        f.write(FILE_BYTES)
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:                              # the child: never back into pytest
        try:
            os.close(read_end)
            _host_child(arch, case, path, write_end)
        finally:
            os._exit(0)
    os.close(write_end)
    chunks = []
    while chunk := os.read(read_end, 1 << 16):
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    answer, data = pickle.loads(b"".join(chunks))
    with open(path, "rb") as f:
        return answer, data, f.read()
