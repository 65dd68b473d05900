"""kernel_model.cpu.idt + vectors: real gate descriptors in guest memory (Intel SDM Vol. 3A, 6.11
Figure 6-2 for 32-bit gates, 6.14.1 Figure 6-8 for 64-bit gates) with Linux's DPLs."""
import struct

from kernel_model.debug import DebugInterface

import pytest

from kernel_model.cpu import idt as V
from kernel_model.memory.space import Space
from kernel_model.idt_handlers import EXCEPTION_SIGNALS, install_idt_handlers


class RecordingKernel:
    """What install_idt_handlers needs from a kernel: the int 0x80 entry, exception delivery, and
    the debug interface's breakpoint table (empty here: every int3 is the program's own)."""

    def __init__(self):
        self.calls = []
        self.debug = DebugInterface()

    def int80_handler(self, frame):
        self.calls.append(("int80", frame.vector))
        return False

    def deliver_exception(self, frame, signal):
        self.calls.append(("exception", frame.vector, signal))
        return False


def raw_gate_fields(space: Space, vector: int) -> dict:
    """Read one gate's bytes from guest memory and take it apart per the SDM figures."""
    bits = space.machine.arch.bits
    size = 8 if bits == 32 else 16
    _, base, limit, _ = space.machine.reg("idtr")
    assert limit == 256 * size - 1
    raw = space.machine.mem.read(base + size * vector, size)
    offset = struct.unpack_from("<H", raw, 0)[0] | struct.unpack_from("<H", raw, 6)[0] << 16
    if bits == 64:
        offset |= struct.unpack_from("<I", raw, 8)[0] << 32
        assert raw[4] & 7 == 0, "IST 0: the stack comes from the TSS-equivalent kernel stack"
        assert struct.unpack_from("<I", raw, 12)[0] == 0, "reserved dword"
    attr = raw[5]
    return {"offset": offset, "selector": struct.unpack_from("<H", raw, 2)[0],
            "p": attr >> 7, "dpl": (attr >> 5) & 3, "type": attr & 0xF, "zero": (attr >> 4) & 1}


@pytest.fixture
def installed(arch):
    space = Space(arch)
    kernel = RecordingKernel()
    install_idt_handlers(kernel, space)
    return space, kernel


@pytest.mark.parametrize("vector,dpl", [(V.DE, 0), (V.BP, 3), (V.OF, 3), (V.UD, 0), (V.GP, 0),
                                        (V.PF, 0), (V.SYSCALL_VECTOR, 3)])
def test_gate_bytes_point_at_the_handler_stub(installed, vector, dpl):
    space, _ = installed
    fields = raw_gate_fields(space, vector)
    assert fields["offset"] == space.layout.stubs + V.STUB_SPACING * vector
    assert fields["selector"] == space.selectors.kernel_cs
    assert fields["p"] == 1 and fields["zero"] == 0
    assert fields["dpl"] == dpl
    assert fields["type"] == V.INTERRUPT_GATE      # 0xE: 32-bit / 64-bit interrupt gate


def test_gate_stub_is_kernel_code(installed):
    space, _ = installed
    stub = raw_gate_fields(space, V.BP)["offset"]
    assert space.machine.mem.perms_at(stub) == 1 | 4        # r-x, not writable by the guest
    assert space.machine.mem.read(stub, 1) in (b"\xcf", b"\x48")   # iret / REX.W iretq


def test_unused_vector_has_a_not_present_gate(installed):
    space, _ = installed
    assert raw_gate_fields(space, 0x42)["p"] == 0
    assert space.idt.handler_for(0x42) is None


def test_handler_lookup_reads_the_gate_from_memory(installed):
    """A gate written straight into the table (not via set_gate) is what dispatch follows:
    vector -> descriptor bytes -> offset -> handler."""
    space, _ = installed
    size = space.idt.gate_size
    bp_bytes = space.machine.mem.read(space.idt.base + size * V.BP, size)
    space.machine.mem.write(space.idt.base + size * 0x42, bp_bytes)
    assert space.idt.gate(0x42).offset == raw_gate_fields(space, V.BP)["offset"]
    assert space.idt.handler_for(0x42) is space.idt.handler_for(V.BP)


def test_every_exception_vector_maps_to_its_linux_signal(installed):
    space, kernel = installed
    for vector, signal in EXCEPTION_SIGNALS.items():
        handler = space.idt.handler_for(vector)
        frame = type("F", (), {"vector": vector, "ip": 0x1001})()   # no tool breakpoint at 0x1000
        handler(frame)
        assert kernel.calls[-1] == ("exception", vector, signal)


@pytest.mark.parametrize("bits", [32, 64])
def test_encode_decode_gate_round_trip(bits):
    offset = 0xFFC0_2030 if bits == 32 else 0xF_FFFF_FF00_2030
    raw = V.encode_gate(bits, offset, 0x10, 3, V.TRAP_GATE)
    assert len(raw) == (8 if bits == 32 else 16)
    assert V.decode_gate(bits, 3, raw) == V.Gate(3, offset, 0x10, 3, V.TRAP_GATE, True)
