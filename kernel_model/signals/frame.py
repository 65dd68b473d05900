"""Signal frames on the user stack, byte for byte as Linux builds them.

Layouts: Linux arch/x86/include/asm/sigframe.h, uapi/asm/sigcontext.h, uapi/asm/ucontext.h.
  x86-64  rt_sigframe: pretcode, ucontext (flags, link, stack_t, sigcontext[256], sigmask), siginfo
  i386    rt_sigframe: pretcode, sig, pinfo, puc, siginfo, ucontext (sigcontext[88]), retcode[8]
  i386    sigframe:    pretcode, sig, sigcontext[88], fpstate_unused[624], extramask, retcode
The FPU/SSE state follows each frame, 64-byte aligned (kernel_model/signals/fpframe.py), and
sigcontext.fpstate points at it; uc_flags says it is in the XSAVE format (UC_FP_XSTATE), with,
on x86-64, UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS (arch/x86/kernel/signal_64.c frame_uc_flags).
"""
import struct
from dataclasses import dataclass

SIGINFO_SIZE = 128
# x86-64 struct sigcontext: 16 GPRs (r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp), rip,
# eflags, cs/gs/fs/ss (u16), err, trapno, oldmask, cr2, fpstate, reserved[8]
SC64_GPRS = ("r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
             "rdi", "rsi", "rbp", "rbx", "rdx", "rax", "rcx", "rsp")
SC64 = struct.Struct("<16QQQHHHHQQQQQ64x")
# i386 struct sigcontext: gs, fs, es, ds, edi, esi, ebp, esp, ebx, edx, ecx, eax, trapno, err,
# eip, cs, eflags, esp_at_signal, ss, fpstate, oldmask, cr2
SC32_GPRS = ("edi", "esi", "ebp", "esp", "ebx", "edx", "ecx", "eax")
SC32 = struct.Struct("<IIII8IIIIIIIIIII")
UC64_HEAD = struct.Struct("<QQQi4xQ")       # uc_flags, uc_link, ss_sp, ss_flags, ss_size
UC32_HEAD = struct.Struct("<IIIiI")
RETCODE_RT32 = b"\xb8\xad\x00\x00\x00\xcd\x80\x00"   # mov $173 (rt_sigreturn), %eax; int $0x80
RETCODE32 = b"\x58\xb8\x77\x00\x00\x00\xcd\x80"      # pop %eax; mov $119 (sigreturn), %eax; int $0x80
UC_FP_XSTATE, UC_SIGCONTEXT_SS, UC_STRICT_RESTORE_SS = 0x1, 0x2, 0x4
UC_FLAGS64 = UC_FP_XSTATE | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS
UC_FLAGS32 = UC_FP_XSTATE
FPSTATE32_SIZE = 624        # struct _fpstate_32: the FSAVE header and the 512-byte FXSAVE area


@dataclass
class SavedRegisters:
    gpr: dict
    pc: int
    flags: int
    segs: dict          # cs, ss (+ ds, es, fs, gs on i386)
    mask: int           # the signal mask to restore
    fpstate: int = 0    # sigcontext.fpstate: where the FPU state is (0: none, start clean)


def pack_siginfo(word: int, signo: int, code: int, *, pid: int = 0, uid: int = 0,
                 status: int = 0, addr: int | None = None, errno: int = 0) -> bytes:
    """siginfo_t: signo, errno, code, then the union (8-byte aligned on x86-64)."""
    head = struct.pack("<iii", signo, errno, code) + (b"\0" * 4 if word == 8 else b"")
    if addr is not None:
        body = struct.pack("<Q" if word == 8 else "<I", addr)
    else:
        body = struct.pack("<iIi", pid, uid, status)
    return (head + body).ljust(SIGINFO_SIZE, b"\0")


def siginfo_of(word: int, signo: int, info: dict) -> bytes:
    """The siginfo_t a pending signal carries: the caller's own bytes for rt_sigqueueinfo
    (Linux copies the user's siginfo and only queues it: kernel/signal.c do_rt_sigqueueinfo),
    with si_signo set to the signal sent; else built from the kernel's fields."""
    raw = info.get("raw")
    if raw is not None:
        return struct.pack("<i", signo) + raw[4:SIGINFO_SIZE]
    return pack_siginfo(word, signo, info.get("code", 0), pid=info.get("pid", 0),
                        uid=info.get("uid", 0), status=info.get("status", 0), addr=info.get("addr"))


def build_rt_frame64(regs: SavedRegisters, info: bytes, restorer: int, stack: tuple) -> bytes:
    sc = SC64.pack(*(regs.gpr[r] for r in SC64_GPRS), regs.pc, regs.flags, regs.segs.get("cs", 0x33),
                   0, 0, regs.segs.get("ss", 0x2B), 0, 0, regs.mask & 0xFFFFFFFF, 0, regs.fpstate)
    uc = UC64_HEAD.pack(UC_FLAGS64, 0, *stack) + sc + struct.pack("<Q", regs.mask)
    return struct.pack("<Q", restorer) + uc + info


RT64_UC_OFFSET = 8
RT64_INFO_OFFSET = 8 + UC64_HEAD.size + SC64.size + 8


def parse_rt_frame64(raw: bytes) -> SavedRegisters:
    sc = SC64.unpack_from(raw, RT64_UC_OFFSET + UC64_HEAD.size)
    mask = struct.unpack_from("<Q", raw, RT64_UC_OFFSET + UC64_HEAD.size + SC64.size)[0]
    return SavedRegisters(gpr=dict(zip(SC64_GPRS, sc[:16])), pc=sc[16], flags=sc[17],
                          segs={"cs": sc[18], "ss": sc[21]}, mask=mask, fpstate=sc[26])


RT64_SIZE = RT64_INFO_OFFSET + SIGINFO_SIZE


def _sc32(regs: SavedRegisters, trapno: int = 0, err: int = 0) -> bytes:
    s = regs.segs
    return SC32.pack(s.get("gs", 0), s.get("fs", 0), s.get("es", 0x2B), s.get("ds", 0x2B),
                     *(regs.gpr[r] for r in SC32_GPRS), trapno, err, regs.pc, s.get("cs", 0x23),
                     regs.flags, regs.gpr["esp"], s.get("ss", 0x2B), regs.fpstate, regs.mask & 0xFFFFFFFF, 0)


def _unsc32(raw: bytes, offset: int) -> tuple[dict, int, int, dict, int]:
    v = SC32.unpack_from(raw, offset)
    gpr = dict(zip(SC32_GPRS, v[4:12]))
    segs = {"gs": v[0] & 0xFFFF, "fs": v[1] & 0xFFFF, "es": v[2] & 0xFFFF, "ds": v[3] & 0xFFFF,
            "cs": v[15] & 0xFFFF, "ss": v[18] & 0xFFFF}
    return gpr, v[14], v[16], segs, v[19]


RT32_INFO_OFFSET = 16
RT32_UC_OFFSET = RT32_INFO_OFFSET + SIGINFO_SIZE
RT32_SIZE = RT32_UC_OFFSET + UC32_HEAD.size + SC32.size + 8 + 8


def build_rt_frame32(frame_addr: int, sig: int, regs: SavedRegisters, info: bytes,
                     restorer: int, stack: tuple) -> bytes:
    head = struct.pack("<IiII", restorer or frame_addr + RT32_SIZE - 8, sig,
                       frame_addr + RT32_INFO_OFFSET, frame_addr + RT32_UC_OFFSET)
    uc = UC32_HEAD.pack(UC_FLAGS32, 0, *stack) + _sc32(regs) + struct.pack("<Q", regs.mask)
    return head + info + uc + RETCODE_RT32


def parse_rt_frame32(raw: bytes, base_offset: int = 0) -> SavedRegisters:
    """`raw` starts at the frame's pretcode (rt_sigreturn finds it at esp - 4)."""
    sc_off = base_offset + RT32_UC_OFFSET + UC32_HEAD.size
    gpr, pc, flags, segs, fpstate = _unsc32(raw, sc_off)
    mask = struct.unpack_from("<Q", raw, sc_off + SC32.size)[0]
    return SavedRegisters(gpr, pc, flags, segs, mask, fpstate)


SF32_SC_OFFSET = 8
SF32_UNUSED_OFFSET = SF32_SC_OFFSET + SC32.size
SF32_EXTRAMASK_OFFSET = SF32_UNUSED_OFFSET + FPSTATE32_SIZE
SF32_SIZE = SF32_EXTRAMASK_OFFSET + 4 + 8


def build_frame32(frame_addr: int, sig: int, regs: SavedRegisters, restorer: int) -> list[tuple[int, bytes]]:
    """(offset, bytes) pieces: Linux never writes fpstate_unused (kept so that extramask stays
    where old programs look for it), so those bytes keep what the stack held."""
    head = struct.pack("<Ii", restorer or frame_addr + SF32_SIZE - 8, sig)
    return [(0, head + _sc32(regs)),
            (SF32_EXTRAMASK_OFFSET, struct.pack("<I", regs.mask >> 32) + RETCODE32)]


def parse_frame32(raw: bytes) -> SavedRegisters:
    """`raw` starts at the frame's pretcode (sigreturn finds it at esp - 8: the handler
    returned, popping pretcode, and the restorer popped sig)."""
    gpr, pc, flags, segs, fpstate = _unsc32(raw, SF32_SC_OFFSET)
    low = SC32.unpack_from(raw, SF32_SC_OFFSET)[20]
    high = struct.unpack_from("<I", raw, SF32_EXTRAMASK_OFFSET)[0]
    return SavedRegisters(gpr, pc, flags, segs, low | (high << 32), fpstate)
