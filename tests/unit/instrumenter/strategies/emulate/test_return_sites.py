"""Where emulated return probes go (instrumenter/strategies/emulate/return_sites.py): the frame-dismantling
instruction before each `ret` when it is the only way into it (US 7,350,196), the `ret` otherwise,
and every `ret` in "ret" mode (DTrace fbt on amd64) — one site per return in every case."""
import pytest

from instrumenter.errors import InstrumenterError
from instrumenter.strategies.emulate.return_sites import return_sites
from tests.unit.emu.guest import asm

START = 0x1000


def _sites(source: str, arch: str = "i386", mode: str = "frame"):
    code = asm(source, arch, START)
    return [(s.address - START, s.ret - START, s.insn) for s in
            return_sites(code, START, arch, mode)]


def test_pop_ebp_before_ret_takes_the_probe():
    assert _sites("push ebp; mov ebp, esp; mov eax, 1; pop ebp; ret") == [(8, 9, "pop ebp")]


def test_leave_before_ret_takes_the_probe_on_x86_64():
    sites = _sites("push rbp; mov rbp, rsp; sub rsp, 16; leave; ret", "x86_64")
    assert [s[2] for s in sites] == ["leave"] and sites[0][1] == sites[0][0] + 1


def test_ret_mode_keeps_every_ret():
    assert _sites("push ebp; mov ebp, esp; pop ebp; ret", mode="ret") == [(4, 4, "ret")]


def test_a_ret_that_a_branch_reaches_keeps_the_probe():
    # Shrink-wrapped early return: `jb` lands on the ret without a frame; probing the pop
    # would miss that return.
    sites = _sites("cmp eax, 2; jb done; push ebp; mov ebp, esp; pop ebp; done: ret")
    assert [s[2] for s in sites] == ["ret"]


def test_a_frameless_function_keeps_the_ret():
    assert [s[2] for s in _sites("mov eax, 1; ret 8")] == ["ret 8"]


def test_an_indirect_jump_keeps_every_ret():
    sites = _sites("push ebp; mov ebp, esp; jmp dword ptr [eax*4 + 0x2000]; pop ebp; ret")
    assert [s[2] for s in sites] == ["ret"]


def test_one_site_per_ret_with_several_returns():
    sites = _sites("push ebp; mov ebp, esp; test eax, eax; je other; pop ebp; ret; "
                   "other: xor eax, eax; pop ebp; ret")
    assert [s[2] for s in sites] == ["pop ebp", "pop ebp"]
    assert len({s[1] for s in sites}) == 2


def test_unknown_mode_is_refused():
    with pytest.raises(InstrumenterError, match="unknown return-probe mode"):
        _sites("ret", mode="exit")
