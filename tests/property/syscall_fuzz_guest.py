"""The syscall fuzzer's guest: a static ELF whose code is a straight run of system calls with
drawn numbers and argument words, then exit_group(0).

The code is encoded here rather than assembled (a hypothesis example makes a new program each
time, and the encodings are four fixed forms, Intel SDM Vol. 2B): `mov r64, imm64` is REX.W
(+REX.B for r8-r15) B8+r io, `mov r32, imm32` is B8+r id, `mov r, rsp/esp` is (REX.W) 89 /r
with ModRM 11 100 r, `syscall` is 0F 05 and `int 0x80` is CD 80. An i386 program makes every
call through int 0x80; an x86-64 program through `syscall` or, with the i386 table, int 0x80
(IA32 emulation: the upper halves of the 64-bit registers are drawn too, and Linux ignores them).

The memory the arguments point into is laid out by the ELF: code (r-x), a read-only page, and
a read-write data segment holding path strings, then a STRUCT_ZONE of drawn words (small
counts, lengths, pointers back into the data: what makes an iovec, a timespec, a sigaction or
a pollfd array half-valid), then a hole (unmapped). Every program first opens a few fds
(PRELUDE) so that calls on fds 3-7 meet a file, a folder, both ends of a pipe and /dev/null.
"""
import struct

CODE_VADDR = 0x0040_0000
RO_VADDR = 0x0050_0000            # one read-only page of 0x41 bytes
DATA_VADDR = 0x0060_0000          # DATA_SIZE bytes, read-write, starting with PATHS
DATA_SIZE = 0x4000
UNMAPPED = 0x0070_0000            # nothing is mapped from here to far above

STACK_POINTER = "SP"              # an argument word that is the caller's stack pointer

# Strings a path argument may meet, NUL-terminated, in the data segment at PATH_ADDRESSES
PATHS = (b"/", b"/f", b"/d", b"/d/g", b"/l", b"/d/../f", b"/nonexistent", b".", b"..",
         b"/tmp/new", b"/proc/self/maps", b"/proc/self/fd/1", b"/proc/self/exe", b"/dev/null",
         b"/dev/zero", b"/dev/urandom", b"f", b"", b"/f/", b"/prog", b"a" * 300)


def make_rootfs(root) -> None:
    """The small tree PATHS meet (a pathlib.Path folder): a file, a folder with a file, a
    symlink to the file, and /tmp."""
    (root / "f").write_bytes(b"hello\n" * 100)
    (root / "d").mkdir()
    (root / "d" / "g").write_bytes(b"g")
    (root / "l").symlink_to("f")
    (root / "tmp").mkdir()


def _data_segment() -> tuple[bytes, tuple[int, ...]]:
    out, addresses = bytearray(), []
    for path in PATHS:
        addresses.append(DATA_VADDR + len(out))
        out += path + b"\0"
    out += b"\xff" * 8 + (b"X" * 5000)            # a long unterminated run of bytes
    return bytes(out.ljust(DATA_SIZE, b"\0")), tuple(addresses)


DATA, PATH_ADDRESSES = _data_segment()
STRUCT_ZONE = DATA_VADDR + 0x2000           # drawn bytes go here (up to STRUCT_ZONE_SIZE)
STRUCT_ZONE_SIZE = 0x200
SCRATCH = DATA_VADDR + 0x3000               # the prelude's pipe() writes its two fds here

# Register numbers of the ABIs (Intel's encoding: rax 0, rcx 1, rdx 2, rbx 3, rsp 4, rbp 5,
# rsi 6, rdi 7, r8-r15 8-15), the call number first, then the six arguments in order
# (Linux arch/x86/entry/entry_64.S and entry_32.S).
SYSCALL_REGISTERS = (0, 7, 6, 2, 10, 8, 9)      # rax; rdi rsi rdx r10 r8 r9
INT80_REGISTERS = (0, 3, 1, 2, 6, 7, 5)         # eax; ebx ecx edx esi edi ebp


def _mov_imm(reg: int, value: int, wide: bool) -> bytes:
    if wide:
        rex = 0x48 | (1 if reg >= 8 else 0)
        return bytes((rex, 0xB8 + (reg & 7))) + struct.pack("<Q", value & (2**64 - 1))
    return bytes((0xB8 + reg,)) + struct.pack("<I", value & 0xFFFFFFFF)


def _mov_sp(reg: int, wide: bool) -> bytes:
    modrm = 0xC0 | (4 << 3) | (reg & 7)
    if wide:
        return bytes((0x48 | (1 if reg >= 8 else 0), 0x89, modrm))
    return bytes((0x89, modrm))


def encode_call(arch: str, gate: str, nr: int, args) -> bytes:
    """One call: load the number and the argument words, then `syscall` or `int 0x80`."""
    wide = arch == "x86_64"
    registers = SYSCALL_REGISTERS if gate == "syscall" else INT80_REGISTERS
    code = bytearray()
    for reg, value in zip(registers, (nr, *args)):
        code += _mov_sp(reg, wide) if value == STACK_POINTER else _mov_imm(reg, value, wide)
    code += b"\x0f\x05" if gate == "syscall" else b"\xcd\x80"
    return bytes(code)


EXIT_GROUP = {"i386": ("int80", 252), "x86_64": ("syscall", 231)}


O_RDWR, O_DIRECTORY = 2, 0o200000
# open("/f", O_RDWR) = 3; open("/d", O_DIRECTORY) = 4; pipe(SCRATCH) = 5, 6;
# open("/dev/null", O_RDWR) = 7 (the i386 numbers 5 and 42, the x86-64 numbers 2 and 22)
PRELUDE = {
    "i386": [("int80", 5, (1, O_RDWR)), ("int80", 5, (2, O_DIRECTORY)), ("int80", 42, (None,)),
             ("int80", 5, (13, O_RDWR))],
    "x86_64": [("syscall", 2, (1, O_RDWR)), ("syscall", 2, (2, O_DIRECTORY)),
               ("syscall", 22, (None,)), ("syscall", 2, (13, O_RDWR))],
}


def _prelude(arch: str) -> list:
    calls = []
    for gate, nr, (first, *rest) in PRELUDE[arch]:
        pointer = SCRATCH if first is None else PATH_ADDRESSES[first]
        calls.append((gate, nr, (pointer, *rest, 0, 0, 0, 0, 0)[:6]))
    return calls


def program(arch: str, calls, struct_zone: bytes = b"") -> bytes:
    """The ELF running the PRELUDE, `calls` = [(gate, nr, args)], then exit_group(0);
    `struct_zone` is copied to STRUCT_ZONE."""
    assert PATHS[1] == b"/f" and PATHS[2] == b"/d" and PATHS[13] == b"/dev/null"
    calls = _prelude(arch) + list(calls)
    code = b"".join(encode_call(arch, gate, nr, args) for gate, nr, args in calls)
    gate, nr = EXIT_GROUP[arch]
    code += encode_call(arch, gate, nr, (0,) * 6)
    zone = STRUCT_ZONE - DATA_VADDR
    data = DATA[:zone] + struct_zone[:STRUCT_ZONE_SIZE] + DATA[zone + len(struct_zone):]
    return elf(arch, code, data)


PF_X, PF_W, PF_R = 1, 2, 4


def elf(arch: str, code: bytes, data: bytes = DATA) -> bytes:
    """A static ET_EXEC with three PT_LOADs: code (r-x), a read-only page, data (rw-)."""
    bits64 = arch == "x86_64"
    ehsize, phentsize = (64, 56) if bits64 else (52, 32)
    headers = ehsize + 3 * phentsize
    segments = [(CODE_VADDR, PF_R | PF_X, code), (RO_VADDR, PF_R, b"A" * 0x41),
                (DATA_VADDR, PF_R | PF_W, data)]
    offset, placed = 0x1000, []
    for vaddr, flags, blob in segments:
        placed.append((vaddr, flags, blob, offset))
        offset += (len(blob) + 0xFFF) & ~0xFFF
    word = "Q" if bits64 else "I"
    ident = b"\x7fELF" + bytes((2 if bits64 else 1, 1, 1)) + bytes(9)
    out = bytearray(offset)
    struct.pack_into(f"<16sHHI{word}{word}{word}IHHHHHH", out, 0, ident, 2,
                     62 if bits64 else 3, 1, CODE_VADDR, ehsize, 0, 0, ehsize, phentsize,
                     3, 0, 0, 0)
    for i, (vaddr, flags, blob, file_offset) in enumerate(placed):
        at = ehsize + i * phentsize
        if bits64:
            struct.pack_into("<IIQQQQQQ", out, at, 1, flags, file_offset, vaddr, vaddr,
                             len(blob), len(blob), 0x1000)
        else:
            struct.pack_into("<IIIIIIII", out, at, 1, file_offset, vaddr, vaddr, len(blob),
                             len(blob), flags, 0x1000)
        out[file_offset:file_offset + len(blob)] = blob
    assert headers <= 0x1000
    return bytes(out)
