"""Emulation on a trap frame that sits on the live stack: US 7,350,196, figures 4A-6B.

When kernel code traps, the CPU does not switch stacks: it pushes EFLAGS, CS and EIP right
below the ESP of the interrupted code and no SS:ESP (Intel SDM Vol. 3A, 6.12.1, Figure 6-4).
IRET then pops exactly those three words, so the ESP the code resumes with is "where the frame
ends". To emulate an instruction that moves ESP, the handler must move the frame so that it
ends at the new ESP — down one slot for `push %ebp` (FIG. 4A -> 4B, [0036]), up one slot for
`pop %ebp` (FIG. 5A -> 5B, [0040]), up to the frame pointer for `leave` (FIG. 6A -> 6B,
[0044]), up past the return address for `ret` — and write what the instruction stores into the
slots the frame gave up.

The instruction semantics are insn.py's, run against `LiveStackCpu`: its `frame.sp` is
the SP the interrupted code had, and its stores are held back until `commit`, because the
frame itself sits where a `push` stores (FIG. 4A: the pushed EBP goes where EFLAGS is). The
commit first writes the moved frame, then the stores: the patent moves the frame one word at a
time in an order that never overwrites a word before it is moved; reading the whole frame
first is the same.

64-bit mode pushes SS:RSP on every trap and aligns RSP to 16 first (SDM 6.14.2), and IRETQ
pops RSP from the frame, so the frame need not move — unless a store of the emulated
instruction falls inside it (a push when RSP was 16-byte aligned: the store lands on the saved
SS). Then the handler moves the frame below the store first, as Linux's x86-64 int3 entry
leaves a gap below the frame for `int3_emulate_push` (arch/x86/entry/entry_64.S). Ring-3 frames
sit on the kernel stack, apart from the user stack, and never move.

Precondition, as for any same-privilege trap handler: the interrupted code keeps nothing it
still needs below its SP (no red zone: the i386 ABI has none, and kernels build with
-mno-red-zone), and its frame pointer is not below its SP.
"""
import copy
import struct
from dataclasses import dataclass

from kernel_model.debug import PROT_READ, PROT_WRITE

from .insn import StackFault

_FMT = {2: "<H", 4: "<I", 8: "<Q"}


class _Registers:
    """The part of the interrupted state IRET restores: what the handlers read and change."""

    def __init__(self, ip: int, sp: int, flags: int):
        self.ip, self.sp, self.flags = ip, sp, flags


class LiveStackCpu:
    """insn.FrameCpu's interface for a bare guest's trap, with stores held back."""

    def __init__(self, frame, view):
        sp = frame.sp if frame.sp is not None else frame.address + frame.size
        self.frame = _Registers(frame.ip, sp, frame.flags)
        self.view = view                      # the guest's CPU and memory (kernel_model/debug/cpu.py)
        self.stores: list[tuple[int, bytes]] = []

    def register(self, name: str) -> int:
        return self.frame.sp if name in ("esp", "rsp") else self.view.register(name)

    def set_register(self, name: str, value: int) -> None:
        self.view.set_register(name, value)

    def load(self, address: int, size: int) -> int:
        _check(self.view, address, size, False)
        data = bytearray(self.view.read(address, size))
        for at, stored in self.stores:                 # a later load sees an earlier store
            for i, byte in enumerate(stored):
                if 0 <= at + i - address < size:
                    data[at + i - address] = byte
        return struct.unpack(_FMT[size], bytes(data))[0]

    def store(self, address: int, size: int, value: int) -> None:
        _check(self.view, address, size, True)
        self.stores.append((address, struct.pack(_FMT[size], value & ((1 << 8 * size) - 1))))


def _check(view, address: int, size: int, write: bool) -> None:
    """The access the real instruction makes must be allowed, or it would have faulted."""
    need = PROT_WRITE if write else PROT_READ
    for page in sorted({address & ~0xFFF, (address + size - 1) & ~0xFFF}):
        perms = view.perms_at(page)
        if perms is None or not perms & need:
            raise StackFault(max(page, address), write, perms is None)


def frame_destination(frame, cpu: LiveStackCpu) -> int:
    """Where the frame must sit for IRET once the emulated instruction is done."""
    if frame.sp is None:
        # FIG. 4B/5B/6B: the frame ends exactly at the ESP the emulated instruction leaves.
        return (cpu.frame.sp - frame.size) & cpu.view.arch.mask
    if any(at < frame.address + frame.size and at + len(data) > frame.address
           for at, data in cpu.stores):
        return (min(at for at, _ in cpu.stores) & ~0xF) - frame.size
    return frame.address


def commit(cpu: LiveStackCpu, frame, view) -> None:
    """Move the frame where IRET must find it, then write the instruction's stores."""
    frame.address = frame_destination(frame, cpu)
    frame.ip, frame.flags = cpu.frame.ip, cpu.frame.flags
    if frame.sp is not None:
        frame.sp = cpu.frame.sp
    _check(view, frame.address, frame.size, True)
    view.write(frame.address, frame.pack())
    for at, data in cpu.stores:
        view.write(at, data)


@dataclass
class Emulation:
    """One emulation as it happened, for teaching views and the figure tests: the frame the
    CPU pushed, the frame IRET will pop, and the stack bytes [window, window + len(before))
    on entry to the handler and just before its IRET."""
    site: int
    insn: object                  # instrumenter.insn.decode.Insn, the original instruction
    form: str                     # "int3" or "lock"
    frame_before: object          # TrapFrame copies
    frame_after: object
    sp_before_trap: int           # the interrupted code's SP
    bp_before_trap: int
    bp_after: int
    window: int
    before: bytes
    after: bytes

    def word_at(self, address: int, *, after: bool) -> int:
        data, word = (self.after if after else self.before), self.frame_before.word
        offset = address - self.window
        return int.from_bytes(data[offset:offset + word], "little")


def emulate_on_frame(run, frame, view, *, bp: str, record=None) -> Emulation | None:
    """Run the compiled emulation `run` (insn.compile_emulation) for `frame` and
    commit it; with `record` (site, insn, form), also return what it did."""
    cpu = LiveStackCpu(frame, view)
    before_frame, bp_before = copy.copy(frame), view.register(bp)
    run(cpu)                                         # only registers change until commit
    if record is None:
        commit(cpu, frame, view)
        return None
    reads_bp = record[1].base_mnemonic == "leave"
    low, high = _window(before_frame, frame_destination(frame, cpu), cpu,
                        bp_before if reads_bp else None)
    before = view.read(low, high - low)
    commit(cpu, frame, view)
    site, insn, form = record
    return Emulation(site, insn, form, before_frame, copy.copy(frame), _sp_before(before_frame),
                     bp_before, view.register(bp), low, before, view.read(low, high - low))


def _sp_before(frame) -> int:
    return frame.address + frame.size if frame.sp is None else frame.sp


def _window(old, new_address: int, cpu: LiveStackCpu, bp_before: int | None) -> tuple[int, int]:
    """The stack range the emulation reads or writes: the SP slots before and after, the
    stores, the frame-pointer slot when given (`leave` reads it) and — when the frame sits on
    the same stack (a same-privilege trap) — both places of the frame. A ring-3 frame is on
    the kernel stack, far away: the TrapFrame copies show it."""
    word, sp_before = old.word, _sp_before(old)
    near = 64 * word
    points = [sp_before, sp_before + word, cpu.frame.sp, cpu.frame.sp + word]
    points += [at for at, _ in cpu.stores] + [at + len(d) for at, d in cpu.stores]
    if bp_before is not None and abs(bp_before - sp_before) <= near:
        points += [bp_before, bp_before + word]
    if abs(old.address - sp_before) <= near:
        points += [old.address, old.address + old.size, new_address, new_address + old.size]
    low, high = min(points) & ~(word - 1), max(points)
    mapped = [p for p in range(low, high, word) if cpu.view.perms_at(p) is not None]
    return min(mapped), max(mapped) + word
