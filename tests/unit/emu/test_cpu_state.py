"""emu.cpu_state: direct views of Unicorn's CPU state, and the API-backed views they fall back
to. Both kinds must agree with uc_reg_read/uc_reg_write at every point the Machine uses them."""
import dataclasses

import pytest

from emu import internals
from emu.cpu_state import ApiStateViews, CpuStateViews, ViewedRegisters, cpu_state_views
from emu.machine import Machine
from emu.registers import REGISTER_IDS

from .guest import CODE, asm, machine_with

GPRS = {"i386": ("eax", "ecx", "edx", "ebx", "esp", "ebp", "esi", "edi"),
        "x86_64": ("rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi",
                   "r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15")}


def test_the_pinned_unicorn_is_viewed_directly(arch):
    """On this build the layout is found: a Unicorn upgrade that moves it shows up here (and
    the probes get slower), not as wrong results."""
    assert isinstance(Machine(arch).cpu_state, CpuStateViews)


@pytest.fixture(params=["direct", "api"])
def views_of(request):
    def make(machine):
        views = machine.cpu_state if request.param == "direct" else ApiStateViews(machine.uc)
        assert isinstance(views, CpuStateViews if request.param == "direct" else ApiStateViews)
        return views
    return make


def test_views_read_what_the_api_reads(arch, views_of):
    m = machine_with(arch)
    views = views_of(m)
    for i, name in enumerate(GPRS[arch]):
        m.set_reg(name, 0x1111_0000 + 0x101 * i)
    m.pc = CODE + 7
    for name in GPRS[arch]:
        assert views.register(name).value == m.uc.reg_read(REGISTER_IDS[name])
    assert views.eip.value == m.uc.reg_read(REGISTER_IDS[m.arch.pc]) == CODE + 7
    assert views.cs.value == m.uc.reg_read(REGISTER_IDS["cs"])


def test_a_32_bit_name_sees_the_low_half(views_of):
    m = machine_with("x86_64")
    m.set_reg("rdi", 0xAAAA_BBBB_CCCC_DDDD)
    assert views_of(m).register("edi").value == 0xCCCC_DDDD


def test_the_flags_have_no_view(views_of):
    with pytest.raises(KeyError):
        views_of(Machine("x86_64")).register("rflags")


@pytest.mark.parametrize("kind", ["direct", "api"])
def test_a_pc_stored_in_an_interrupt_hook_is_where_the_guest_resumes(arch, kind, monkeypatch):
    """The one place a store into the eip view is defined (cpu_state.py): the int3 path."""
    if kind == "api":
        _without_env(monkeypatch)
    m = machine_with(arch, "int3; mov eax, 1; int 0x80; mov eax, 2; int 0x80")
    assert isinstance(m.cpu_state, CpuStateViews if kind == "direct" else ApiStateViews)
    target = CODE + len(asm("int3; mov eax, 1; int 0x80", arch))
    m.breakpoint_redirect = lambda pc: target if pc == CODE + 1 else None
    m.trap_handler = lambda vector, pc: False            # int 0x80 ends the run
    m.run(CODE)
    assert m.reg("eax") == 2


def test_a_declined_redirect_reports_the_trap(arch):
    m = machine_with(arch, "int3; nop")
    seen = []
    m.breakpoint_redirect = lambda pc: seen.append(("redirect", pc))
    m.trap_handler = lambda vector, pc: seen.append(("trap", vector, pc)) and False
    m.run(CODE)
    assert seen == [("redirect", CODE + 1), ("trap", 3, CODE + 1)]


def test_viewed_registers_read_like_a_uclib_batch(arch):
    m = machine_with(arch)
    names = GPRS[arch][:6]
    for i, name in enumerate(names):
        m.set_reg(name, 0x40 + i)
    reader = m.raw_registers(names)
    assert isinstance(reader, ViewedRegisters)
    assert reader.read() == [0x40 + i for i in range(6)]
    mixed = m.raw_registers(names + ("cs",))          # cs has no view: one uclib batch
    assert not isinstance(mixed, ViewedRegisters) and mixed.read()[:6] == reader.read()


def _without_env(monkeypatch, env=None):
    """Machines made from now on see `env` as the located CPU-state layout (None: not found)."""
    layout = dataclasses.replace(internals.located(), cpu_env=env)
    monkeypatch.setattr(internals, "located", lambda: layout)


def test_a_layout_that_cannot_be_confirmed_falls_back_to_the_api(monkeypatch, arch):
    _without_env(monkeypatch)
    m = Machine(arch)
    assert isinstance(m.cpu_state, ApiStateViews)
    m.set_reg(GPRS[arch][0], 5)
    assert m.reg(GPRS[arch][0]) == 5 and m.raw_registers(GPRS[arch][:2]).read() == [5, 0]


def test_a_wrong_env_address_is_refused_without_touching_it(monkeypatch):
    """Per-Uc confirmation reads through /proc/self/mem: an address that is not the CPU's
    registers (here: unmapped) gives the API views, never a crash."""
    env = internals.located().cpu_env
    _without_env(monkeypatch, dataclasses.replace(env, env_distance=1 << 46))
    assert isinstance(cpu_state_views(Machine("x86_64").uc), ApiStateViews)


def test_a_wrapped_32_bit_jump_target_reads_as_the_architectural_eip():
    """QEMU's jcc leaves bit 32 set in env->eip when a 32-bit target wraps (the fetch wraps;
    the API's EIP drops the bit): the Machine reads the view masked, so the int3 there is
    reported at its real address, and the PC it writes back is whole again."""
    m = Machine("i386")
    m.mem.map(0x10000, 0x1000, 7)
    m.mem.map(0xFFFE0000, 0x1000, 7)
    source = 0xFFFE0000
    rel32 = (0x10000 - (source + 8)) & 0xFFFF_FFFF           # cmp eax, eax ; je 0x10000
    m.mem.write(source, b"\x39\xc0\x0f\x84" + rel32.to_bytes(4, "little"))
    m.mem.write(0x10000, b"\xcc\x90\x90\xcd\x80")             # int3 ; nop ; nop ; int 0x80
    seen = []
    m.breakpoint_redirect = lambda pc: seen.append(pc) or 0x10002
    m.trap_handler = lambda vector, pc: seen.append((vector, pc)) and False
    m.run(source)
    assert seen == [0x10001, (0x80, 0x10005)]
    assert m.cpu_state.eip.value == m.pc == 0x10005
