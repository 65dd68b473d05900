"""System calls inside a relocated function (US 6,957,421: the whole function runs
in its instrumented copy, most of musl's libc included, whose functions make their calls with
an inline `syscall` / `int $0x80`).

A single instruction run out of line by a trampoline cannot make a system call (the policy
tables refuse `syscall` and `int 0x80`: a restarted call backs the IP up by 2 onto the
trampoline's jump, RCX would hold the trampoline's address). Inside a copy of the whole
function both are sound, because the copy keeps the instruction at the start of its own piece
and the piece goes on in the copy:

  * restart (-ERESTART*, SA_RESTART: kernel_model/blocking.py) backs the IP up by the
    instruction's 2 bytes, which lands on the same instruction in the copy: it runs again;
  * a signal delivered at the call's return (the kernel's usual point) or while it sleeps
    sees the copy's IP, which the signal frame shows as the original address
    (signals.py: the instruction itself, or the one after it once it ran);
  * `syscall` leaves the address of the next instruction in RCX (Intel SDM Vol. 2B,
    SYSCALL: RCX <- RIP), which would be a copy address: the copy follows it with
    `mov $original_next, %rcx` (no flags touched), so RCX is what the original would hold;
    a signal taken between the two steps the thread over the mov first (async signals only:
    none can be synchronous there);
  * fork/vfork/clone return in the copy in the child too (its memory holds the copy).

`sysenter` stays refused: it returns through the vDSO's fixed address, not to the next
instruction.
"""
from ...insn.decode import Insn
from ...insn.emit import Emitter
from ...insn.policy import InsnClass
from ...insn.relocate import Relocated

SYSCALL, INT80 = b"\x0f\x05", b"\xcd\x80"


def is_system_call(insn: Insn) -> bool:
    return insn.raw in (SYSCALL, INT80)


def relocate_system_call(insn: Insn, at: int, arch: str) -> Relocated:
    """The call at `at` in a copy, then RCX fixed (syscall), then on to the next original
    instruction (a jump the copy drops when the next piece follows)."""
    e = Emitter(at, arch)
    e.raw(insn.raw)
    if insn.raw == SYSCALL:
        e.mov_reg_imm64("rcx", insn.next_address)
    e.jump(insn.next_address, "fallthrough")
    return Relocated(insn, InsnClass.PLAIN, at, bytes(e.code), tuple(e.exits), "system-call")
