"""The patent's trampoline data, laid out in one place (US 9,336,001 FIG. 2 item 144, FIG. 4
blocks 430-440, FIG. 6 blocks 610-650), for every strategy that builds a trampoline.

One trampoline, from its first byte:

  UserInstrumentation       native actions (instrumenter/strategies/native.py: count, args:N),
                            each self-contained: it saves the flags it changes and falls through
  Save_Registers            (block 610) the thread's registers and flags into a saved-register
                            block on its own stack, below the x86-64 red zone
  Call_User_BreakpointHandler  (block 620) one call per user handler: handler(regs, scratch)
  Restore_Registers         (block 630) registers and flags from the block, as the handler left it
  OriginalInstruction_Copy  (block 640) the relocated original instruction(s)
  Jump_NextInstruction      (block 650) back to the instruction after the probed one
  User_BreakpointHandler    (FIG. 2 item 146, block 440) a copy of each handler's code

The saved-register block ("trapline_regs", like Linux's pt_regs) is what a handler's first
argument points to. Offsets in bytes:

  x86-64 (8-byte words)                        i386 (4-byte words)
    0 r15    8 r14   16 r13   24 r12            0 ebx    4 ecx    8 edx   12 esi
   32 rbp   40 rbx   48 r11   56 r10           16 edi   20 ebp   24 eax   28 eflags
   64 r9    72 r8    80 rax   88 rcx           32 eip   36 esp   (block of 48 bytes)
   96 rdx  104 rsi  112 rdi  120 rflags
  128 rip  136 rsp                (block of 144 bytes)

(the general registers in pt_regs' order.) Every general register and the flags a handler
writes there are the thread's when it goes on; rip/eip (the probed address) and rsp/esp (the
thread's stack pointer at the probe) are for reading: writes to them are ignored, because the
original instruction runs where it was probed, on the stack it had.

The calling convention is the psABI's: x86-64 `handler(regs, scratch)` with regs in rdi and
scratch in rsi (System V AMD64 psABI 3.2.3); i386 cdecl with both on the stack (System V i386
psABI 2.2). `scratch` points to a zeroed read/write area of SCRATCH_SIZE bytes per handler and
site, the handler's own memory across hits (a fork child gets a copy). The stack is 16-byte
aligned at the call (both psABIs) and DF is clear (cld; AMD64 psABI 3.2.1); the handler may
change any register (all are restored from the block) and, with fxsave, x87/SSE state (the
FXSAVE image is taken before the calls and put back after: SDM Vol. 2A, FXSAVE).

Stack use: the block and the handler's frame live below the thread's stack pointer minus 128
bytes, the red zone a leaf function may be using (AMD64 psABI 3.2.2); i386 has no red zone and
keeps the same shape. Nothing of the program's stack is written.

The glue is assembled once per (arch, fxsave) with keystone: it depends on no address; only the
calls (rel32 to the handler copy), the stores of the probed address and of each scratch pointer
are emitted per site.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from functools import lru_cache


from ..errors import InstrumenterError
from ..insn.emit import RED_ZONE, Emitter

SCRATCH_SIZE = 256
FXSAVE_SIZE = 512
HANDLER_ALIGN = 16

REGS = {
    "x86_64": ("r15", "r14", "r13", "r12", "rbp", "rbx", "r11", "r10", "r9", "r8", "rax", "rcx",
               "rdx", "rsi", "rdi", "rflags", "rip", "rsp"),
    "i386": ("ebx", "ecx", "edx", "esi", "edi", "ebp", "eax", "eflags", "eip", "esp"),
}
WORD = {"x86_64": 8, "i386": 4}
BLOCK_SIZE = {"x86_64": 144, "i386": 48}       # multiples of 16
READ_ONLY = {"x86_64": ("rip", "rsp"), "i386": ("eip", "esp")}


def reg_offset(arch: str, name: str) -> int:
    """Where register `name` sits in the saved-register block."""
    return REGS[arch].index(name) * WORD[arch]


@dataclass(frozen=True)
class Block:
    """A named part of a trampoline, [start, end), for listings and fault reports."""
    name: str
    start: int
    end: int
    owner: str = ""               # the probe whose handler or action this is, if any


@dataclass
class Page:
    address: int
    code: bytearray = field(default_factory=bytearray)
    blocks: list[Block] = field(default_factory=list)
    data: list[tuple[int, bytes]] = field(default_factory=list)   # handlers' writable data

    @property
    def here(self) -> int:
        return self.address + len(self.code)

    def add(self, name: str, code: bytes, owner: str = "") -> int:
        start = self.here
        self.code += code
        self.blocks.append(Block(name, start, self.here, owner))
        return start

    def align(self, to: int = HANDLER_ALIGN) -> None:
        pad = -self.here % to
        self.code += b"\xcc" * pad             # int3: nothing executes the padding

    def block_at(self, address: int) -> Block | None:
        for block in self.blocks:
            if block.start <= address < block.end:
                return block
        return None


# ---- the glue ----------------------------------------------------------------------------
_KS: dict = {}


def assemble(source: str, arch: str, address: int = 0) -> bytes:
    # keystone is imported by the first glue or .s handler: probes without either need none
    from keystone import KS_ARCH_X86, KS_MODE_32, KS_MODE_64, Ks
    mode = KS_MODE_32 if arch == "i386" else KS_MODE_64
    ks = _KS.get(mode) or _KS.setdefault(mode, Ks(KS_ARCH_X86, mode))
    try:
        encoding, _ = ks.asm(source, address)
    except Exception as e:                     # keystone.KsError: one line, the assembler's words
        raise InstrumenterError(f"cannot assemble: {e}") from None
    return bytes(encoding or b"")


def _frame(arch: str, fxsave: bool) -> int:
    """Bytes the aligned call frame takes below the block: the argument/pointer words and the
    FXSAVE image (16-byte aligned, at sp + 16)."""
    return 16 + (FXSAVE_SIZE if fxsave else 0)


@lru_cache(maxsize=None)
def save_glue(arch: str, fxsave: bool) -> tuple[bytes, bytes]:
    """Save_Registers in two pieces: the part before the probed-address store (registers and
    flags into the block) and the part after it (DF clear, the aligned frame, FXSAVE)."""
    sp, ax, word = ("rsp", "rax", "qword") if arch == "x86_64" else ("esp", "eax", "dword")
    size = BLOCK_SIZE[arch]
    flags = "rflags" if arch == "x86_64" else "eflags"
    lines = [f"lea {sp}, [{sp} - {RED_ZONE + size}]"]
    lines += [f"mov {word} ptr [{sp} + {reg_offset(arch, r)}], {r}"
              for r in REGS[arch] if r not in (flags, *READ_ONLY[arch])]
    # pop with an sp-based destination computes its address after sp moves back (SDM Vol. 2B,
    # POP), so the offset is the block's own.
    lines += ["pushfq" if arch == "x86_64" else "pushfd",
              f"pop {word} ptr [{sp} + {reg_offset(arch, flags)}]",
              f"lea {ax}, [{sp} + {RED_ZONE + size}]",
              f"mov {word} ptr [{sp} + {reg_offset(arch, READ_ONLY[arch][1])}], {ax}"]
    before = assemble("; ".join(lines), arch)
    bx = "rbx" if arch == "x86_64" else "ebx"
    after = ["cld", f"mov {bx}, {sp}", f"and {sp}, -16", f"sub {sp}, {_frame(arch, fxsave)}",
             f"mov {word} ptr [{sp} + 8], {bx}"]
    if fxsave:
        after.append(f"fxsave [{sp} + 16]")
    return before, assemble("; ".join(after), arch)


@lru_cache(maxsize=None)
def restore_glue(arch: str, fxsave: bool) -> bytes:
    """Restore_Registers: FXRSTOR, back to the block, every register and the flags from it
    (push with an sp-based source reads before sp moves: SDM Vol. 2B, PUSH), then sp back
    above the red zone with lea, which changes no flag."""
    sp, word = ("rsp", "qword") if arch == "x86_64" else ("esp", "dword")
    flags = "rflags" if arch == "x86_64" else "eflags"
    lines = [f"fxrstor [{sp} + 16]"] if fxsave else []
    lines.append(f"mov {sp}, {word} ptr [{sp} + 8]")
    lines += [f"mov {r}, {word} ptr [{sp} + {reg_offset(arch, r)}]"
              for r in REGS[arch] if r not in (flags, *READ_ONLY[arch])]
    lines += [f"push {word} ptr [{sp} + {reg_offset(arch, flags)}]",
              "popfq" if arch == "x86_64" else "popfd",
              f"lea {sp}, [{sp} + {RED_ZONE + BLOCK_SIZE[arch]}]"]
    return assemble("; ".join(lines), arch)


def store_probe_address(arch: str, address: int) -> bytes:
    """mov word [sp + offset of rip/eip], address (the flags are saved already)."""
    offset = reg_offset(arch, READ_ONLY[arch][0])

    def store_dword(at: int, value: int) -> bytes:         # mov dword [sp + disp32], imm32
        return b"\xc7\x84\x24" + struct.pack("<iI", at, value & 0xFFFF_FFFF)
    if arch == "i386":
        return store_dword(offset, address)
    return store_dword(offset, address) + store_dword(offset + 4, address >> 32)


def call_glue(arch: str, at: int, handler: int, scratch: int) -> bytes:
    """Call_User_BreakpointHandler for one handler: its arguments, then call rel32."""
    if arch == "x86_64":
        setup = (b"\x48\x8b\x7c\x24\x08"                          # mov rdi, [rsp + 8]
                 + b"\x48\xbe" + struct.pack("<Q", scratch))      # movabs rsi, scratch
    else:
        setup = (b"\x8b\x44\x24\x08"                              # mov eax, [esp + 8]
                 + b"\x89\x04\x24"                                # mov [esp], eax
                 + b"\xc7\x44\x24\x04" + struct.pack("<I", scratch))   # mov dword [esp+4], scratch
    e = Emitter(at + len(setup), arch)
    end = e.here + 5
    rel = handler - end
    if arch == "i386":
        rel = (rel + 0x8000_0000) % 0x1_0000_0000 - 0x8000_0000
    if not -(1 << 31) <= rel < (1 << 31):
        raise InstrumenterError(f"handler at {handler:#x} is out of call reach of {at:#x}")
    return setup + b"\xe8" + struct.pack("<i", rel)


# ---- one trampoline -----------------------------------------------------------------------
@dataclass(frozen=True)
class HandlerCall:
    """One user handler at one site: its code is copied into the page, its writable data and
    scratch area are in the data pages (`data`, `scratch`)."""
    handler: object               # instrumenter/strategies/handlers/user.py UserHandler
    owner: str                    # the probe (spec text)
    scratch: int
    data: int


def lay_out(address: int, arch: str, *, probe_address: int, natives=(), handlers=(),
            copy=None, onward: int | None = None, flags_live: bool = True) -> Page:
    """The trampoline at `address` (module docstring): `natives` are (NativeSlot, owner) pairs,
    `handlers` HandlerCalls, `copy(at)` relocates the original instruction(s) to `at` (an
    instrumenter/insn/relocate.py Relocated: its fall-through jump is Jump_NextInstruction);
    without a copy, the page ends with a jump to `onward` (a jump probe's part)."""
    # Pass 1 finds where the handler copies go (after the glue and the copy, 16-byte aligned);
    # pass 2 emits the calls to them. Nothing in the glue changes size with the call targets.
    first = _lay_out_once(address, arch, probe_address, natives, handlers, [address] * len(handlers),
                          copy, onward, flags_live)
    if not handlers:
        return first
    at = first.here + (-first.here % HANDLER_ALIGN)
    images, entries = [], []
    for call in handlers:
        image = call.handler.image(arch, at, call.data)
        images.append((at, image))
        entries.append(image.entry)
        at += len(image.code) + (-len(image.code) % HANDLER_ALIGN)
    page = _lay_out_once(address, arch, probe_address, natives, handlers, entries, copy, onward,
                         flags_live)
    if page.here != first.here:
        raise InstrumenterError(f"trampoline at {address:#x} changed size between passes")
    for (at, image), call in zip(images, handlers):
        page.align()
        page.add("User_BreakpointHandler", image.code, call.owner)
        if image.data:
            page.data.append((call.data, image.data))
    return page


def _lay_out_once(address, arch, probe_address, natives, handlers, entries, copy, onward,
                  flags_live) -> Page:
    from .native import emit_part                      # native.py imports the emitter too
    page = Page(address)
    for slot, owner in natives:
        page.add(f"UserInstrumentation({slot.spec.text})",
                 emit_part(slot, page.here, None, arch, flags_live=flags_live), owner)
    if handlers:
        fxsave = any(call.handler.fxsave for call in handlers)
        before, after = save_glue(arch, fxsave)
        page.add("Save_Registers", before + store_probe_address(arch, probe_address) + after)
        for call, entry in zip(handlers, entries):
            page.add("Call_User_BreakpointHandler", call_glue(arch, page.here, entry, call.scratch),
                     call.owner)
        page.add("Restore_Registers", restore_glue(arch, fxsave))
    if copy is not None:
        relocated = copy(page.here)
        code, jump = relocated.code, _final_fallthrough(relocated)
        split = len(code) if jump is None else jump - relocated.address
        page.add("OriginalInstruction_Copy", code[:split])
        if split < len(code):
            page.add("Jump_NextInstruction", code[split:])
    elif onward is not None:
        e = Emitter(page.here, arch)
        e.jump(onward, "fallthrough")
        page.add("Jump_Onward", bytes(e.code))
    return page


def _final_fallthrough(relocated) -> int | None:
    """Where the relocated code's last jump back to the next original instruction starts, if
    the code ends with it."""
    end = relocated.address + len(relocated.code)
    for exit_ in relocated.exits:
        if exit_.kind == "fallthrough" and exit_.target == relocated.insn.next_address \
                and end - exit_.address in (5, 14):
            return exit_.address
    return None


def slot_size(arch: str, natives=(), handlers=()) -> int:
    """Bytes enough for a trampoline with these parts (an XOL slot is allocated first)."""
    from .native import part_room
    # the copy and jump back; each native part
    size = 64 + sum(part_room(pair[0].spec if pair else None) for pair in natives)
    if handlers:
        fxsave = any(call.handler.fxsave for call in handlers)
        before, after = save_glue(arch, fxsave)
        size += len(before) + len(after) + 16 + len(restore_glue(arch, fxsave))
        for call in handlers:
            size += 32 + call.handler.code_size(arch) + HANDLER_ALIGN
    return size


def has_handler(page: Page) -> bool:
    return any(b.name == "User_BreakpointHandler" for b in page.blocks)


def fault_namer(page: Page):
    """What the kernel says when the guest faults inside this trampoline (the debug
    interface's tool_code_fault): a fault in a handler or in the glue around it is the
    handler's, by its probe; one in the copied original instruction is the program's own."""
    def name(ip: int) -> str | None:
        block = page.block_at(ip)
        if block is None or block.name in ("OriginalInstruction_Copy", "Jump_NextInstruction"):
            return None
        if block.name == "User_BreakpointHandler":
            return f"handler of {block.owner} faulted at handler+{ip - block.start:#x}"
        owners = sorted({b.owner for b in page.blocks if b.name == "User_BreakpointHandler"})
        return f"trampoline of {', '.join(owners)} faulted in {block.name}+{ip - block.start:#x}"
    return name
