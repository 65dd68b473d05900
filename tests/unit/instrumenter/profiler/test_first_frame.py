"""The interrupted frame's caller-saved registers take part in the walk (sampler.walk_registers):
in a realigned function's prologue gcc's CFI has the CFA in %ecx (i386 main's DRAP, `lea
4(%esp),%ecx; and $-16,%esp`), and a tick there was truncated as "CFA register ecx unknown"
(Debian's bash-static, i386). After the first step only the callee-saved registers are known."""
import struct
from types import SimpleNamespace

from instrumenter.profiler.sampler import walk_registers
from instrumenter.profiler.unwind import Unwinder, _plain_form
from kernel_model.debug import PROT_EXEC, PROT_READ, PROT_WRITE
from loader.cfi import FrameRule

PROLOGUE, CALLER, STACK = 0x8049010, 0x8049100, 0xBFFF0000
DRAP = FrameRule(cfa=("ecx", 0), saved={"eip": ("at", -4)}, return_register="eip")
USES_ECX = FrameRule(cfa=("ecx", 8), saved={"eip": ("at", -4)}, return_register="eip")


class Door:
    def __init__(self, stack_words: dict):
        self.memory = stack_words

    def cpu(self, process):
        return SimpleNamespace(read=self.read, arch=SimpleNamespace(bits=32),
                               register_batch=lambda names: SimpleNamespace(
                                   read=lambda: [self.live[n] for n in names]))

    def read(self, address, size):
        if 0x8048000 <= address and address + size <= 0x8050000:
            return b"\xcc" * size          # code: the walk looks for a signal restorer there
        if not STACK <= address < STACK + 0x1000:
            raise AssertionError(f"read outside the stack: {address:#x}")
        return b"".join(struct.pack("<I", self.memory.get(a, 0)) for a in range(address, address + size, 4))[:size]

    def area_at(self, process, address):
        if STACK <= address < STACK + 0x1000:
            return SimpleNamespace(start=STACK, end=STACK + 0x1000, perms=PROT_READ | PROT_WRITE, name=b"[stack]")
        return SimpleNamespace(start=0x8048000, end=0x8050000, perms=PROT_READ | PROT_EXEC, name=b"prog")

    def image_map_version(self, process):
        return (0, 0)

    def images(self, process):
        return []

    def image_at(self, process, address):
        return None


class Rules(Unwinder):
    """The CFI: at the prologue CFA = ecx; at the return address into the caller, CFA = ecx + 8,
    which the caller's frame cannot know."""

    def rule_at(self, process, lookup):
        rule = {PROLOGUE: DRAP, CALLER - 1: USES_ECX}.get(lookup)
        return rule, _plain_form(rule)


def test_walk_registers_reads_the_caller_saved_ones_too():
    door = Door({})
    door.live = {name: i for i, name in enumerate(("eip", "esp", "ebx", "esi", "edi", "ebp",
                                                    "eax", "ecx", "edx"))}
    regs = walk_registers(door, None, SimpleNamespace(ip=PROLOGUE, sp=STACK + 0x100))
    assert (regs["eip"], regs["esp"], regs["ecx"], regs["eax"], regs["edx"]) == \
        (PROLOGUE, STACK + 0x100, 7, 6, 8)


def test_a_cfa_in_a_caller_saved_register_is_followed_in_the_first_frame_only():
    ecx = STACK + 0x200
    door = Door({ecx - 4: CALLER})                  # main's return address, where ecx points
    door.live = {"eip": PROLOGUE, "esp": STACK + 0x1F0, "ebx": 0, "esi": 0, "edi": 0, "ebp": 0,
                 "eax": 0, "ecx": ecx, "edx": 0}
    process = SimpleNamespace(image=None)
    regs = walk_registers(door, process, SimpleNamespace(ip=PROLOGUE, sp=STACK + 0x1F0))
    stack = Rules(door).unwind(process, regs)
    # the first step used the live %ecx; the caller's own rule needs an %ecx no frame kept
    assert stack.frames == (PROLOGUE, CALLER)
    assert stack.truncated == f"CFA register ecx unknown at {CALLER - 1:#x}"
