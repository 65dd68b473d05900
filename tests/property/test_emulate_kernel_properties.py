"""US 7,350,196's claim for kernel code: after the handler has emulated a probed instruction on a
frame that sits on the very stack the instruction changes, "the architecture state is no
different than it would have been had the [instruction] been natively executed" ([0038], [0041]).

For random registers, flags and stack contents, the same instruction runs once natively at CPL 0
(Unicorn executes it) and once probed (int3 or LOCK #UD; a same-privilege trap through the IDT;
the handler shifts the frame, IRET), and the end states must be equal: every general-purpose
register, the IP, the arithmetic flags, and the stack page — except the words below the final
stack pointer where the trap frames were written, which a real CPU leaves there too (memory below
SP is not state of the interrupted code: no red zone in kernel code). CPL 3 runs the same way
(the frame is on the kernel stack), both architectures, both patch forms.

Preconditions of any same-privilege emulation (instrumenter/strategies/emulate/kernel.py): the frame
pointer is not below the stack pointer, and the stack has room for the frame below.
"""
import pytest
from hypothesis import event, given
from hypothesis import strategies as st

from emu.arch import arch_named
from emu.registers import gpr_names
from instrumenter.insn.decode import decode
from instrumenter.strategies.emulate.strategy import lock_patch_refusal
from instrumenter.strategies.emulate.kernel_probes import KernelEmulateProbes
from kernel_model.ring0 import BareGuest
from tests.unit.emu.guest import asm

from .test_emulate_properties import FLAG_BITS, JCCS, _pattern

ARCHES = ("i386", "x86_64")
CODE = 0x0040_0000
TARGET = CODE + 0x200
PAGE = 0x1000


def shapes(arch: str):
    bp, regs = ("ebp", ("eax", "ebx", "ecx", "edx", "esi", "edi", "ebp", "esp")) \
        if arch == "i386" else ("rbp", ("rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
                                        "r8", "r9", "r12", "r15"))
    return st.one_of(
        st.just(f"push {bp}"), st.just(f"pop {bp}"), st.just("leave"), st.just("ret"),
        st.just("nop"),
        st.integers(0, 0x100).map(lambda n: f"ret {n}"),
        st.integers(0, 0x400).map(lambda n: f"enter {n}, 0"),
        st.sampled_from(regs).map(lambda r: f"push {r}"),
        st.just(f"jmp {TARGET:#x}"), st.just(f"call {TARGET:#x}"),
        st.sampled_from(JCCS).map(lambda j: f"{j} {TARGET:#x}"),
    )


def _stack_page(guest: BareGuest) -> int:
    return guest.stack_top - PAGE


@st.composite
def states(draw, arch: str):
    bits = arch_named(arch).bits
    word = bits // 8
    regs = {name: draw(st.integers(0, (1 << bits) - 1), label=name)
            for name in gpr_names(arch_named(arch)) if name not in ("esp", "rsp")}
    # Offsets in the stack page: room below SP for enter's locals and the frame, BP >= SP.
    sp = 0x500 + word * draw(st.integers(0, (0xD00 - 0x500) // word))
    bp = sp + word * draw(st.integers(0, (0xF00 - sp) // word))
    flags = draw(st.integers(0, FLAG_BITS)) & FLAG_BITS
    stack = bytearray(_pattern(draw(st.integers(0, (1 << 64) - 1)), PAGE))
    for slot in (sp, bp):
        value = draw(st.one_of(st.integers(CODE, CODE + 0xF00), st.integers(0, (1 << bits) - 1)))
        stack[slot:slot + word] = value.to_bytes(word, "little")
    return regs, sp, bp, flags, bytes(stack)


def _run(arch: str, ring: int, code: bytes, state, form: str | None):
    regs, sp_offset, bp_offset, flags, stack = state
    guest = BareGuest(arch, ring=ring)
    guest.load_code(CODE, code + b"\xcc" * 16)
    m, page = guest.machine, _stack_page(guest)
    m.mem.write(page, stack)
    guest.enter(CODE, page + sp_offset)
    for name, value in regs.items():
        m.set_reg(name, value)
    m.set_reg("ebp" if arch == "i386" else "rbp", page + bp_offset)
    m.set_reg(m.arch.flags, (m.reg(m.arch.flags) & ~FLAG_BITS) | flags)
    hits, probes = [], None
    if form is not None:
        probes = KernelEmulateProbes(guest, form=form, record=True)
        probes.place(CODE, lambda address, frame: hits.append(address))
    m.run(CODE, count=1)
    gprs = {n: m.reg(n) for n in gpr_names(m.arch)}
    lowest = min((min(e.frame_before.address, e.frame_after.address) for e in probes.emulations),
                 default=None) if probes else None
    return gprs, m.pc, m.reg(m.arch.flags) & FLAG_BITS, m.mem.read(page, PAGE), hits, lowest, page


@pytest.mark.parametrize("ring", [0, 3])
@pytest.mark.parametrize("form", ["int3", "lock"])
@pytest.mark.parametrize("arch", ARCHES)
@given(data=st.data())
def test_emulated_instruction_on_a_live_stack_frame_leaves_the_native_state(data, arch, form, ring):
    text = data.draw(shapes(arch), label="insn")
    tail = asm("mov ebp, esp" if arch == "i386" else "mov rbp, rsp", arch)
    code = asm(text, arch, CODE) + tail
    if form == "lock" and lock_patch_refusal(code + b"\xcc" * 16, CODE, arch) is not None:
        event(f"lock form refused for {text.split()[0]}")
        return
    event(f"{arch} ring {ring} {form} {decode(code, CODE, arch).base_mnemonic}")
    state = data.draw(states(arch), label="state")
    native = _run(arch, ring, code, state, None)
    probed = _run(arch, ring, code, state, form)
    assert probed[4] == [CODE], "the probe fired once, before the emulation"
    for what, a, b in zip(("registers", "ip", "flags"), native[:3], probed[:3]):
        assert a == b, f"{text} ({form}, ring {ring}): {what} differ: native {a} vs emulated {b}"
    page, final_sp = probed[6], probed[0]["esp" if arch == "i386" else "rsp"]
    sp_before = page + state[1]
    lowest = probed[5] if ring == 0 else None
    differing = [page + i for i in range(PAGE) if native[3][i] != probed[3][i]
                 and not _under_a_trap_frame(page + i, lowest, final_sp, sp_before,
                                             written=native[3][i] != state[4][i])]
    assert not differing, f"{text} ({form}, ring {ring}): stack differs at {differing[0]:#x} " \
        f"(sp before {sp_before:#x}, after {final_sp:#x})"


def _under_a_trap_frame(address: int, lowest: int | None, final_sp: int, sp_before: int, *,
                        written: bool) -> bool:
    """Memory a same-privilege trap may leave different from a native run: from the lowest
    frame slot up to the final SP (dead: below the stack pointer), and what was below SP at the
    trap and the instruction did not write (enter's uninitialized locals)."""
    if lowest is None or address < lowest:
        return False                        # ring 3 frames are on the kernel stack
    return address < final_sp or (address < sp_before and not written)
