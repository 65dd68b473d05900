"""Native probe actions: code that runs inside the guest, so a hit never leaves the emulator.

Two actions (Probe.native):
  "count"   a 64-bit counter, incremented atomically by the trampoline;
  "args:N"  N argument words (psABI: rdi, rsi, rdx, rcx, r8, r9 on x86-64, System V AMD64
            psABI 3.2.3; [esp+4+4i] at entry on i386, System V i386 psABI 2.2) appended to a
            bounded record buffer, by a restartable sequence; a full buffer traps into the
            tool, which drains it at once: no record is lost (native_collector.py).
Either may have a guard (NativeSpec.guard, native_guard.py): an integer predicate on the
argument words, compiled in front of the action, so a rejected hit costs a compare and a jump.
The jump and trampoline strategies place this code in their pages (page_layout.py). The tool
reads the counters and buffers back from guest memory when the session collects (process
exit, exec, the end of the run, a full buffer): `NativeCollector` (native_collector.py).

Why the counters do NOT live in the XOL code pages: a guest store into a page that holds
translated code makes the emulator drop that page's translations (self-modifying-code
detection, as on real CPUs where it flushes the pipeline), so every hit would retranslate the
trampoline. They live in a separate read/write data mapping near the code instead
(x86-64: within ±2 GiB, so the trampoline addresses them RIP-relative).

Stack use: a part first moves the stack pointer 128 bytes down with `lea` (flags untouched) —
the x86-64 red zone (psABI 3.2.2) that a leaf function may be using — then saves the status
flags (SAVE_FLAGS: inc/add/cmp change them) and its scratch registers. i386 has no red zone;
the same shape is kept so that both architectures' parts read alike. A count at a function's
entry needs none of it (emit_part, flags_live).

Per process: fork copies the data pages with the rest of the memory, so a child starts with the
parent's counts and undrained records; `NativeCollector.fork` zeroes the child's copies (the
parent's are collected from the parent), so every count and record belongs to the one process
that produced it. A vfork child shares the parent's memory, so its hits count for the parent.
"""
import struct
from dataclasses import dataclass, field
from functools import lru_cache

import capstone
from capstone import x86_const as X

from ..probes.context import X86_64_ARGUMENT_REGISTERS, ProbeContext
from ..insn.emit import RED_ZONE, REG_NUMBERS, Emitter
from ..errors import InstrumenterError

PAGE = 0x1000
DATA_CHUNK = 64 * PAGE
PROT_RW = 3
DEFAULT_CAPACITY = 4096          # records per args:N buffer between two collections
MAX_NATIVE_ARGS = 6              # what the x86-64 ABI passes in registers


@dataclass(frozen=True)
class NativeSpec:
    kind: str                    # "count" or "args"
    nargs: int = 0
    capacity: int = DEFAULT_CAPACITY
    # an integer predicate run first (native_guard.py): only the hits it accepts are counted
    # or stored; None: every hit
    guard: object = None
    # kind "table": a keyed aggregation in a guest hash table (native_table.TableSpec)
    table: object = None

    @property
    def text(self) -> str:
        action = {"count": "count", "table": "table"}.get(self.kind, f"args:{self.nargs}")
        return action if self.guard is None else f"{action} if guard"


def parse_native(text) -> NativeSpec:
    """"count" or "args:N" (1 <= N <= 6) — one-line error otherwise. A NativeSpec is taken as
    it is (a guarded action, which has no text form: the probe language builds it)."""
    if isinstance(text, NativeSpec):
        return text
    if text == "count":
        return NativeSpec("count")
    kind, _, count = text.partition(":")
    if kind == "args" and count.isdigit() and 1 <= int(count) <= MAX_NATIVE_ARGS:
        return NativeSpec("args", int(count))
    raise InstrumenterError(f"native action {text!r}: expected count or args:N (N = 1..{MAX_NATIVE_ARGS})")


class NativeHit:
    """The hook Session places for a probe with a native action. The jump strategy sees
    `.native` and emits in-guest code; any other strategy simply calls it (the Python path)."""

    def __init__(self, session, probe):
        self.session, self.probe = session, probe
        self.native = parse_native(probe.native)

    def __call__(self, thread, address: int) -> None:
        args = ()
        guard = self.native.guard
        if self.native.kind != "count" or guard is not None:
            from .native_guard import accepts, words
            ctx = ProbeContext(self.session.kernel, thread, self.probe, address)
            read = ctx.args(max(self.native.nargs, words(guard) if guard is not None else 0))
            if guard is not None and not accepts(guard, read):
                return
            args = read[:self.native.nargs] if self.native.kind != "count" else ()
        self.session.hit(self.probe, thread, address, args=args)


# ---- the guest's data --------------------------------------------------------------------
@dataclass
class NativeSlot:
    """The guest memory of one native action at one site (same addresses in fork children)."""
    hook: NativeHit
    site: int                    # the probed address
    counter: int                 # count: hits; args: records written (the next index)
    dropped: int = 0             # args: records that found the buffer full
    array: int = 0               # args: capacity * nargs words
    name: str = ""               # the site symbolized when placed (records name it)
    # args: where the append's restartable sequence starts, its commit instruction, and the
    # drain trap are, as offsets from the part's first byte (the same for every copy)
    sequence: tuple[int, int, int] | None = None

    @property
    def spec(self) -> NativeSpec:
        return self.hook.native

    def size(self, word: int) -> int:
        if self.spec.kind == "table":
            from .native_table import table_bytes
            return table_bytes(self.spec.table)
        return 16 + self.spec.capacity * self.spec.nargs * word


class NativeData:
    """Read/write pages near the code for counters and buffers, handed out 16-byte aligned."""

    def __init__(self, debug, process, near: int):
        self.debug, self.process, self.near = debug, process, near
        self.next = self.limit = 0

    def forked(self, child) -> "NativeData":
        """The same pages in a fork child (its memory copy holds them): allocation goes on
        there, in the child's own copy."""
        clone = NativeData(self.debug, child, self.near)
        clone.next, clone.limit = self.next, self.limit
        return clone

    def allocate(self, size: int) -> int:
        size = (size + 15) & ~15
        if self.next + size > self.limit:
            chunk = max(DATA_CHUNK, (size + PAGE - 1) & ~(PAGE - 1))
            self.next = self.debug.map_pages(self.process, chunk, PROT_RW, near=self.near,
                                             name=b"[trapline-native]")
            self.limit = self.next + chunk
        address = self.next
        self.next += size
        return address


def new_slot(data: NativeData, hook: NativeHit, site: int, word: int, name: str) -> NativeSlot:
    spec = hook.native
    if spec.kind == "count":
        return NativeSlot(hook, site, counter=data.allocate(8), name=name)
    if spec.kind == "table":
        from .native_table import table_bytes
        base = data.allocate(table_bytes(spec.table))
        return NativeSlot(hook, site, counter=base, array=base, name=name)
    base = data.allocate(16 + spec.capacity * spec.nargs * word)
    return NativeSlot(hook, site, counter=base, dropped=base + 8, array=base + 16, name=name)


# ---- the guest's code (Intel SDM Vol. 2 encodings) ---------------------------------------
def emit_part(slot: NativeSlot, address: int, next_address: int | None, arch: str, *,
              flags_live: bool = True) -> bytes:
    """The trampoline part for `slot` placed at `address`, ending with a jump to next_address
    (None: it falls through into whatever follows it, as in a trampoline page).

    flags_live=False (status_flags_dead proved that the code after the site overwrites the
    status flags before anything reads them): a count is then one locked instruction (two on
    i386) and nothing needs saving — not even the stack is touched.
    """
    if slot.spec.kind == "table":
        return _emit_table_part(slot, address, next_address, arch)
    if slot.spec.guard is not None:
        return emit_guarded_part(slot, address, next_address, arch, flags_live=flags_live)
    e = Emitter(address, arch)
    if slot.spec.kind == "count" and not flags_live:
        _increment64(e, slot.counter, arch)
        return _onward(e, next_address)
    e.lea_sp(-RED_ZONE)
    e.raw(SAVE_FLAGS)
    if slot.spec.kind == "count":
        _increment64(e, slot.counter, arch)
    elif arch == "x86_64":
        _append_args_x86_64(e, slot, address)
    else:
        _append_args_i386(e, slot, address)
    e.raw(RESTORE_FLAGS)
    e.lea_sp(RED_ZONE)
    return _onward(e, next_address)


def emit_guarded_part(slot, address: int, next_address, arch: str, *, flags_live: bool = True) -> bytes:
    """native.emit_part's part for a slot whose spec has a guard: the stack below the red zone
    and the flags saved as for any part, then the guard, then the action (count, or the
    args append with its restartable sequence), then the restore that a rejected hit jumps to.

    A count where the status flags are dead (native.status_flags_dead) and the guard needs no
    scratch register is the guard and the locked increment alone: nothing saved, the stack
    untouched (the cheapest rejection: a compare and a jump a comparison)."""
    from .native_guard import emit_guard, needs_scratch
    e = Emitter(address, arch)
    if slot.spec.kind == "count" and not flags_live and not needs_scratch(slot.spec.guard, arch):
        land = emit_guard(e, slot.spec.guard, arch, depth=0)
        _increment64(e, slot.counter, arch)
        land()
        return _onward(e, next_address)
    e.lea_sp(-RED_ZONE)
    e.raw(SAVE_FLAGS)
    land = emit_guard(e, slot.spec.guard, arch)
    if slot.spec.kind == "count":
        _increment64(e, slot.counter, arch)
    elif arch == "x86_64":
        _append_args_x86_64(e, slot, address)
    else:
        _append_args_i386(e, slot, address)
    land()
    e.raw(RESTORE_FLAGS)
    e.lea_sp(RED_ZONE)
    return _onward(e, next_address)


def _emit_table_part(slot, address: int, next_address, arch: str) -> bytes:
    """A keyed aggregation's part (native_table.py): saved as any part, the guard if any, the
    table's lookup and updates, the restore that a rejected hit jumps to."""
    from .native_guard import emit_guard
    from .native_table import emit_table_body
    e = Emitter(address, arch)
    e.lea_sp(-RED_ZONE)
    e.raw(SAVE_FLAGS)
    land = emit_guard(e, slot.spec.guard, arch) if slot.spec.guard is not None else None
    emit_table_body(e, slot, arch)
    if land is not None:
        land()
    e.raw(RESTORE_FLAGS)
    e.lea_sp(RED_ZONE)
    return _onward(e, next_address)


# The bytes a part may take: the jump strategy's PART_SLOT, and the 160 page_layout.slot_size
# counts for each native part of a trampoline (a test keeps them equal; jump.py imports this
# module, so it is not imported here).
PART_LIMIT = 160


def part_room(spec) -> int:
    """The bytes the part for `spec` is given: PART_LIMIT, more for a table's lookup."""
    if getattr(spec, "kind", None) == "table":           # (a text spec is count or args:N)
        from .native_table import PART_ROOM
        return PART_ROOM
    return PART_LIMIT


def fits(spec: NativeSpec) -> bool:
    """Whether the part for `spec` fits a part's slot on both architectures: a guard longer
    than that stays on the Python path."""
    from types import SimpleNamespace
    at = 0x10000
    for arch in ("x86_64", "i386"):
        slot = NativeSlot(SimpleNamespace(native=spec), at, counter=at, dropped=at + 8, array=at + 16)
        if len(emit_part(slot, at, at, arch)) > part_room(spec):
            return False
    return True


def _onward(e: Emitter, next_address: int | None) -> bytes:
    if next_address is not None:
        e.jump(next_address, "fallthrough")
    return bytes(e.code)


# ---- status-flag liveness ---------------------------------------------------------------
_FLAG_NAMES = ("OF", "SF", "ZF", "AF", "PF", "CF")
_READS = sum(getattr(X, f"X86_EFLAGS_{kind}_{f}") for kind in ("TEST", "PRIOR") for f in _FLAG_NAMES)
_WRITES = {f: sum(getattr(X, f"X86_EFLAGS_{kind}_{f}") for kind in ("MODIFY", "RESET", "SET",
                                                                     "UNDEFINED")
                  if hasattr(X, f"X86_EFLAGS_{kind}_{f}")) for f in _FLAG_NAMES}
# Read the flags without capstone saying so (it lists no TEST bits for them).
_IMPLICIT_READERS = frozenset({"pushf", "pushfd", "pushfq", "lahf"})
_LEAVES = frozenset({"jump", "call", "ret", "int", "iret", "branch_relative"})   # loop/jecxz too
# Shifts and rotates leave every flag alone when their masked count is 0 (SDM Vol. 2B, SAL/SAR/
# SHL/SHR, RCL/RCR/ROL/ROR, SHLD, SHRD: "If the count is 0, the flags are not affected"), yet
# capstone lists their flags as modified: they write only when the count is an immediate that
# is not 0 after masking (CL is known at run time only).
_COUNTED = frozenset({"shl", "sal", "shr", "sar", "rol", "ror", "rcl", "rcr", "shld", "shrd"})


@lru_cache(maxsize=None)
def _flag_effects(raw: bytes, arch: str) -> int:
    cs = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_32 if arch == "i386" else capstone.CS_MODE_64)
    cs.detail = True
    return next(cs.disasm(raw, 0)).eflags


def status_flags_dead(insns) -> bool:
    """Whether the straight-line code `insns` (from the probe site on) writes all six status
    flags before any instruction reads one — a liveness scan as DynamoRIO's and Pin's inline
    instrumentation does, so an action may clobber them without saving. Anything that leaves
    the straight line (branch, call, return, interrupt) or the end of the code: live."""
    written = set()
    for insn in insns:
        if insn.base_mnemonic in _IMPLICIT_READERS or insn.groups & _LEAVES \
                or insn.branch_target is not None:
            return False
        effects = _flag_effects(insn.raw, insn.arch)
        if effects & _READS:
            return False
        if insn.base_mnemonic in _COUNTED and _count_may_be_zero(insn):
            continue
        written |= {f for f, bits in _WRITES.items() if effects & bits}
        if len(written) == len(_FLAG_NAMES):
            return True
    return False


def _count_may_be_zero(insn) -> bool:
    """Whether a shift or rotate may run with a masked count of 0: a count in CL, or an
    immediate that masks to 0 (5 bits, 6 with a 64-bit destination)."""
    count = insn.operands[-1]
    if count.kind != "imm":
        return True
    return count.imm & (0x3F if insn.operands[0].size == 8 else 0x1F) == 0


# The status flags (the only ones inc/add/xadd/cmp change) saved without pushf/popf: popf may
# change TF and IF, so the emulator ends its translation block after every popf and leaves the
# generated code — about as costly as the rest of the hit. lahf copies SF ZF AF PF CF into AH
# and seto keeps OF in AL (SDM Vol. 2A, LAHF; Vol. 2B, SETcc); restoring, `add al, 0x7f`
# overflows exactly when AL was 1, which sets OF back, and sahf restores the other five. The
# same technique as DynamoRIO's and Pin's inlined instrumentation. The flag image is kept on the
# stack (push/pop change no flag), so the action may use (e/r)ax freely.
SAVE_FLAGS = (b"\x50"              # push (e/r)ax
              b"\x9f"              # lahf
              b"\x0f\x90\xc0"      # seto al
              b"\x50")             # push (e/r)ax: the flag image
RESTORE_FLAGS = (b"\x58"           # pop (e/r)ax: the flag image
                 b"\x04\x7f"       # add al, 0x7f: OF = (al == 1)
                 b"\x9e"           # sahf
                 b"\x58")          # pop (e/r)ax


def _increment64(e: Emitter, counter: int, arch: str) -> None:
    if arch == "x86_64":
        _rip(e, b"\xf0\x48\xff\x05", counter)                 # lock inc qword [rip+d]
        return
    # No 64-bit inc on i386: lock add the low half, lock adc the carry into the high half.
    # Each is atomic and each carry belongs to the add that made it, so concurrent threads
    # never lose a count (a reader between the two could see a torn value; the tool reads
    # only while the guest is stopped).
    e.raw(b"\xf0\x83\x05" + struct.pack("<I", counter) + b"\x01")        # lock add [c], 1
    e.raw(b"\xf0\x83\x15" + struct.pack("<I", counter + 4) + b"\x00")    # lock adc [c+4], 0


def _rip(e: Emitter, opcode: bytes, target: int, tail: bytes = b"") -> None:
    """opcode+ModRM [rip+disp32] (+ tail): disp counts from the end of the instruction."""
    end = e.here + len(opcode) + 4 + len(tail)
    disp = target - end
    if not -(1 << 31) <= disp < (1 << 31):
        raise InstrumenterError(f"native data at {target:#x} is out of rip-relative reach of {e.here:#x}")
    e.raw(opcode + struct.pack("<i", disp) + tail)


def _append_args_x86_64(e: Emitter, slot: NativeSlot, part: int) -> None:
    """A restartable sequence (kernel_model/debug/restartable.py): rax = [index]; if rax <
    capacity: store the argument registers at array + rax*N*8 (through r11, which passes no
    argument), then commit with `inc qword [index]`; else an int3 whose handler drains the
    buffer and sends the thread back to the start (native_collector.py)."""
    spec = slot.spec
    e.raw(b"\x41\x53")                                        # push r11
    start = e.here
    _rip(e, b"\x48\x8b\x05", slot.counter)                    # mov rax, [rip+d]
    e.raw(b"\x48\x3d" + struct.pack("<i", spec.capacity))     # cmp rax, capacity
    stores = b""
    for i, reg in enumerate(X86_64_ARGUMENT_REGISTERS[:spec.nargs]):
        n = REG_NUMBERS[reg]                                  # mov [r11 + 8i], reg
        stores += bytes((0x49 | ((n >> 3) << 2), 0x89, 0x43 | ((n & 7) << 3), 8 * i))
    body = b"\x48\x6b\xc0" + bytes((8 * spec.nargs,))         # imul rax, rax, N*8
    lea_at = e.here + 2 + len(body)                           # after jae rel8 and the imul
    lea = b"\x4c\x8d\x1d" + struct.pack("<i", slot.array - (lea_at + 7))   # lea r11, [rip+d]
    body += lea + b"\x49\x01\xc3" + stores                    # add r11, rax
    commit_at = e.here + 2 + len(body)
    commit = b"\x48\xff\x05" + struct.pack("<i", slot.counter - (commit_at + 7))  # inc [rip+d]
    e.raw(b"\x73" + bytes((len(body) + len(commit) + 2,)))     # jae full
    e.raw(body + commit + b"\xeb\x01")                         # jmp done
    e.raw(b"\xcc")                                            # full: the drain trap
    slot.sequence = (start - part, commit_at - part, e.here - 1 - part)
    e.raw(b"\x41\x5b")                                        # done: pop r11


def _append_args_i386(e: Emitter, slot: NativeSlot, part: int) -> None:
    """The same with eax/ecx; arguments are copied from the caller's stack with push/pop
    (a push through [esp+d] computes its address before esp moves: SDM Vol. 2B, PUSH)."""
    spec = slot.spec
    e.raw(b"\x51")                                            # push ecx
    start = e.here
    e.raw(b"\xa1" + struct.pack("<I", slot.counter))          # mov eax, [index]
    e.raw(b"\x3d" + struct.pack("<I", spec.capacity))         # cmp eax, capacity
    # At this point esp = entry esp - 128 - 12 (eax, flag image, ecx); [entry esp] is the return
    # address, so argument i is at [esp + 140 + 4 + 4i].
    body = b"\x6b\xc0" + bytes((4 * spec.nargs,))             # imul eax, eax, N*4
    body += b"\x8d\x88" + struct.pack("<I", slot.array)       # lea ecx, [eax + array]
    for i in range(spec.nargs):
        body += b"\xff\xb4\x24" + struct.pack("<I", RED_ZONE + 12 + 4 + 4 * i)  # push [esp+d]
        body += b"\x8f\x41" + bytes((4 * i,))                 # pop dword [ecx + 4i]
    commit_at = e.here + 2 + len(body)
    commit = b"\xff\x05" + struct.pack("<I", slot.counter)    # inc dword [index]
    e.raw(b"\x73" + bytes((len(body) + len(commit) + 2,)))     # jae full
    e.raw(body + commit + b"\xeb\x01")                         # jmp done
    e.raw(b"\xcc")                                            # full: the drain trap
    slot.sequence = (start - part, commit_at - part, e.here - 1 - part)
    e.raw(b"\x59")                                            # done: pop ecx
