"""Signal frames in a stack walk: a handler returns into a restorer, and the interrupted code's
registers are in the frame the kernel wrote below them (gdb's sigtramp frames, perf's and
libunwind's `unw_is_signal_frame`).

A handler is called with a return address the kernel pushed: sa_restorer (glibc's and musl's
`__restore_rt`, i386's `__restore` for handlers without SA_SIGINFO) or, without SA_RESTORER on
i386, the `retcode` in the frame itself. The restorer is known by its code, as gdb knows it
(i386-linux-tdep.c i386_linux_sigtramp_start, amd64-linux-tdep.c amd64_linux_sigtramp_start):
  i386 sigreturn      pop %eax; mov $119,%eax; int $0x80       58 b8 77 00 00 00 cd 80
  i386 rt_sigreturn   mov $173,%eax; int $0x80                 b8 ad 00 00 00 cd 80
  x86-64 rt_sigreturn mov $15,%rax; syscall                    48 c7 c0 0f 00 00 00 0f 05
the same bytes in glibc, musl and Linux's retcode (arch/x86/kernel/signal_32.c). musl has no CFI
for them; glibc's describes the registers, but a CFI walk would then look up the interrupted PC
as if it were a return address (PC - 1) and refuse a stack pointer that jumps to another stack
(sigaltstack): the code is recognized first, whatever the CFI says.

The interrupted registers are read where sys_rt_sigreturn / sys_sigreturn read them, from the
stack pointer at the restorer (arch/x86/kernel/signal_64.c, signal_32.c; layouts in
arch/x86/include/asm/sigframe.h and uapi/asm/sigcontext.h, as kernel_model/signals/frame.py
writes them): after the handler's `ret` popped pretcode,
  x86-64 rt_sigframe  SP = &uc;               uc_mcontext at SP + 40
  i386 rt_sigframe    SP = &sig (frame + 4);  uc.uc_mcontext at frame + 164 = SP + 160
  i386 sigframe       SP = &sig (frame + 4);  sc at frame + 8 = SP + 4, or SP once the
                      restorer's `pop %eax` has taken sig.
The frame after the signal frame is an interrupted one, like a tick's: its PC is looked up as
is (not as a return address - 1), and every general register is known.
"""
from __future__ import annotations

from typing import NamedTuple

from emu.memory import MemoryAccessError

SIGNAL_MARK = "[signal]"        # the signal frame's name in a stack (gdb: <signal handler called>)


class Restorer(NamedTuple):
    syscall: str                 # "rt_sigreturn" or "sigreturn"
    code: bytes
    positions: tuple[int, ...]   # offsets of its instructions: where an interrupted PC can be
    context: dict                # instruction offset -> where the sigcontext is, from the SP


RESTORERS = {
    32: (Restorer("sigreturn", b"\x58\xb8\x77\x00\x00\x00\xcd\x80", (0, 1, 6), {0: 4, 1: 0, 6: 0}),
         Restorer("rt_sigreturn", b"\xb8\xad\x00\x00\x00\xcd\x80", (0, 5), {0: 160, 5: 160})),
    64: (Restorer("rt_sigreturn", b"\x48\xc7\xc0\x0f\x00\x00\x00\x0f\x05", (0, 7), {0: 40, 7: 40}),),
}
# struct sigcontext (uapi/asm/sigcontext.h): the general registers' offsets.
#   x86-64: r8..r15, rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, each 8 bytes
#   i386 (sigcontext_32): gs, fs, es, ds, di, si, bp, sp, bx, dx, cx, ax, trapno, err, ip
SIGCONTEXT = {
    64: {name: 8 * i for i, name in enumerate(("r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15",
                                                "rdi", "rsi", "rbp", "rbx", "rdx", "rax", "rcx",
                                                "rsp", "rip"))},
    32: {"edi": 16, "esi": 20, "ebp": 24, "esp": 28, "ebx": 32, "edx": 36, "ecx": 40, "eax": 44,
         "eip": 56},
}
SIGCONTEXT_SPAN = {64: 136, 32: 60}      # through the IP
LOOK_BEHIND = max(max(r.positions) for rs in RESTORERS.values() for r in rs)
LOOK_AHEAD = max(len(r.code) for rs in RESTORERS.values() for r in rs)


class SignalReturn(NamedTuple):
    """A PC in a restorer: where it starts, which it is, and the offset of the PC in it."""
    start: int
    restorer: Restorer
    position: int

    @property
    def context(self) -> int:
        """Where the interrupted registers (struct sigcontext) are, from the SP at the PC."""
        return self.restorer.context[self.position]


def recognize(code: bytes, code_at: int, pc: int, bits: int) -> SignalReturn | None:
    """The restorer whose instruction is at `pc`, from `code` read at `code_at` (around the PC)."""
    for restorer in RESTORERS[bits]:
        for position in restorer.positions:
            offset = pc - position - code_at
            if 0 <= offset and code[offset:offset + len(restorer.code)] == restorer.code:
                return SignalReturn(pc - position, restorer, position)
    return None


def context_registers(raw: bytes, bits: int) -> dict:
    """The interrupted registers from a struct sigcontext's first SIGCONTEXT_SPAN bytes."""
    word = bits // 8
    return {name: int.from_bytes(raw[offset:offset + word], "little")
            for name, offset in SIGCONTEXT[bits].items()}


class SignalReturns:
    """Which addresses are in a restorer, for one image map at a time (the unwinder's): code in
    an object is read once, code elsewhere (Linux's on-stack retcode) at every look."""

    def __init__(self, door):
        self.door = door
        self._known: dict[int, SignalReturn | None] = {}
        # Every address ever recognized: a stack none of whose addresses is here has no
        # signal frame (the symbolizer's quick test; each hit is looked at again).
        self.seen: set[int] = set()

    def forget(self) -> None:
        """The image map changed: what was read may not be there any more."""
        self._known = {}

    def at(self, process, cpu, bits: int, pc: int, interrupted: bool) -> SignalReturn | None:
        """The restorer at `pc` in `process` (whose memory `cpu` reads): anywhere in it for an
        interrupted PC, at its start for a return address (the handler's `ret` goes there)."""
        found = self._known.get(pc, False)
        if found is False:
            found = self._read(cpu, pc, bits)
            if self.door.image_at(process, pc) is not None:
                self._known[pc] = found
        if found is None or not interrupted and found.position:
            return None
        if len(self.seen) > 4096:
            self.seen.clear()
        self.seen.add(pc)
        return found

    @staticmethod
    def _read(cpu, pc: int, bits: int) -> SignalReturn | None:
        start = max(pc - LOOK_BEHIND, 0)
        try:
            return recognize(cpu.read(start, pc + LOOK_AHEAD - start), start, pc, bits)
        except MemoryAccessError:
            pass
        for restorer in RESTORERS[bits]:        # at the edge of a mapping: piece by piece
            for position in restorer.positions:
                try:
                    code = cpu.read(pc - position, len(restorer.code))
                except MemoryAccessError:
                    continue
                if code == restorer.code:
                    return SignalReturn(pc - position, restorer, position)
        return None
