"""struct seccomp_data (include/uapi/linux/seccomp.h), what a filter reads about a call:
int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6] — 64 bytes in the CPU's byte order.

arch is the calling convention's AUDIT_ARCH (include/uapi/linux/audit.h): an int 0x80 call, even
from 64-bit code, is AUDIT_ARCH_I386 (syscall_get_arch: in_ia32_syscall). The instruction
pointer is the address after the syscall instruction (KSTK_EIP of the entry's pt_regs); a 32-bit
call's arguments are its registers zero-extended.
"""
import struct

AUDIT_ARCH = {"x86_64": 0xC000_003E, "i386": 0x4000_0003}
SECCOMP_DATA = struct.Struct("<iIQ6Q")


def seccomp_data(abi: str, nr: int, ip: int, args) -> bytes:
    words = (tuple(args) + (0,) * 6)[:6]
    return SECCOMP_DATA.pack(nr - (1 << 32) if nr >= 1 << 31 else nr, AUDIT_ARCH[abi], ip, *words)
