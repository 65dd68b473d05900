"""The Interrupt Descriptor Table: real gate descriptors in guest memory, and the vector numbers.

This module is the table itself (gate formats, the Idt that writes and reads gates) and the
architecture's vector numbers (imported as `V`); which handler the kernel puts behind each
gate is kernel_model/idt_handlers.py.

Gate formats: Intel SDM Vol. 3A, 6.11 (Figure 6-2, 32-bit gates) and 6.14.1 (Figure 6-8,
64-bit gates). Each gate's offset points at a stub in the kernel region; the kernel keeps the
Python handler for each stub address, so dispatch really goes *through* the gate: vector ->
descriptor bytes -> offset -> handler.

Gate DPL follows Linux (arch/x86/kernel/idt.c): #BP (int3), #OF (into) and int 0x80 are
callable from ring 3 (DPL 3); everything else is DPL 0, so `int $n` for those from user mode
raises #GP instead.
"""
import struct
from dataclasses import dataclass

INTERRUPT_GATE = 0xE       # IF cleared on entry
TRAP_GATE = 0xF            # IF unchanged (Linux uses interrupt gates; trap gates for teaching)
STUB_SPACING = 0x10

# Vectors (Intel SDM Vol. 3A, Table 6-1) and Linux's int 0x80 system-call gate.
DE, DB, NMI, BP, OF, BR, UD, NM, DF = 0, 1, 2, 3, 4, 5, 6, 7, 8
TS, NP, SS, GP, PF, MF, AC, MC, XM = 10, 11, 12, 13, 14, 16, 17, 18, 19
SYSCALL_VECTOR = 0x80
USER_CALLABLE = frozenset({BP, OF, SYSCALL_VECTOR})
# Exceptions that push an error code (Intel SDM Vol. 3A, Table 6-1 "Error Code" column).
HAS_ERROR_CODE = frozenset({DF, TS, NP, SS, GP, PF, AC})
# Faults report the address of the faulting instruction; traps the next one (SDM 6.5).
FAULTS = frozenset({DE, BR, UD, NM, TS, NP, SS, GP, PF, MF, AC, XM})

NAMES = {DE: "#DE divide error", DB: "#DB debug", BP: "#BP breakpoint", OF: "#OF overflow",
         BR: "#BR bound range", UD: "#UD invalid opcode", NM: "#NM device not available",
         DF: "#DF double fault", GP: "#GP general protection", PF: "#PF page fault",
         MF: "#MF x87 error", AC: "#AC alignment check", XM: "#XM SIMD exception",
         SYSCALL_VECTOR: "int 0x80 system call"}


@dataclass(frozen=True)
class Gate:
    vector: int
    offset: int
    selector: int
    dpl: int
    kind: int
    present: bool


def encode_gate(bits: int, offset: int, selector: int, dpl: int, kind: int) -> bytes:
    attr = 0x80 | (dpl << 5) | kind
    if bits == 32:
        return struct.pack("<HHBBH", offset & 0xFFFF, selector, 0, attr, (offset >> 16) & 0xFFFF)
    return struct.pack("<HHBBHII", offset & 0xFFFF, selector, 0, attr, (offset >> 16) & 0xFFFF,
                       (offset >> 32) & 0xFFFFFFFF, 0)


def decode_gate(bits: int, vector: int, raw: bytes) -> Gate:
    if bits == 32:
        lo, sel, _, attr, hi = struct.unpack("<HHBBH", raw)
        offset = lo | (hi << 16)
    else:
        lo, sel, _, attr, mid, high, _ = struct.unpack("<HHBBHII", raw)
        offset = lo | (mid << 16) | (high << 32)
    return Gate(vector, offset, sel, (attr >> 5) & 3, attr & 0xF, bool(attr & 0x80))


class Idt:
    """256 gates in guest memory; `handler_for(vector)` reads the gate and finds its handler."""

    def __init__(self, machine, base: int, stubs: int, kernel_cs: int):
        self.machine, self.base, self.stubs, self.kernel_cs = machine, base, stubs, kernel_cs
        self.bits = machine.arch.bits
        self.gate_size = 8 if self.bits == 32 else 16
        self._handlers: dict[int, object] = {}      # stub address -> Python handler
        self._gates: dict[int, Gate] = {}           # decoded cache, refreshed on every set_gate
        # on_gate_change(vector): told after every set_gate (the trap dispatcher's native
        # breakpoints stand in for one #BP gate: cpu/traps.py)
        self.on_gate_change = None
        machine.mem.write(base, bytes(256 * self.gate_size))
        machine.set_reg("idtr", (0, base, 256 * self.gate_size - 1, 0))

    def set_gate(self, vector: int, handler, *, dpl: int = 0, kind: int = INTERRUPT_GATE) -> None:
        stub = self.stubs + STUB_SPACING * vector
        raw = encode_gate(self.bits, stub, self.kernel_cs, dpl, kind)
        self.machine.mem.write(self.base + self.gate_size * vector, raw)
        self._handlers[stub] = handler
        self._gates[vector] = decode_gate(self.bits, vector, raw)    # what memory holds now
        if self.on_gate_change is not None:
            self.on_gate_change(vector)

    @property
    def decoded_gates(self) -> dict[int, Gate]:
        """The decoded cache `gate` looks in first (vector -> Gate, replaced on every
        set_gate): for the int3 fast path's identity check, a dict look-up instead of a call."""
        return self._gates

    def gate(self, vector: int) -> Gate:
        gate = self._gates.get(vector)
        return gate if gate is not None else self._read_gate(vector)

    def handler_for(self, vector: int):
        gate = self.gate(vector)
        return self._handlers.get(gate.offset) if gate.present else None

    def _read_gate(self, vector: int) -> Gate:
        raw = self.machine.mem.read(self.base + self.gate_size * vector, self.gate_size)
        return decode_gate(self.bits, vector, raw)
