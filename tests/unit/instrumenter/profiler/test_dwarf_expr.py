"""instrumenter/profiler/dwarf_expr.py: the CFI expressions compilers emit, evaluated."""
import pytest

from instrumenter.profiler.dwarf_expr import evaluate
from loader.cfi import CfiUnsupported

# binutils' x86-64 PLT CFA: rsp + 8 + (((rip & 15) >= 11) << 3) (the push of the PLT0 path)
PLT = (("DW_OP_breg7", (8,)), ("DW_OP_breg16", (0,)), ("DW_OP_lit15", ()), ("DW_OP_and", ()),
       ("DW_OP_lit11", ()), ("DW_OP_ge", ()), ("DW_OP_lit3", ()), ("DW_OP_shl", ()), ("DW_OP_plus", ()))


@pytest.mark.parametrize("rip,extra", [(0x1000, 0), (0x100A, 0), (0x100B, 8), (0x100F, 8)])
def test_the_plt_cfa(rip, extra):
    assert evaluate(PLT, {"rsp": 0x7000, "rip": rip}, None, 64) == 0x7008 + extra


def test_a_realigned_i386_frame_loads_its_cfa():
    memory = {0x5000 - 16: 0x6000}
    ops = (("DW_OP_breg5", (-16,)), ("DW_OP_deref", ()))
    assert evaluate(ops, {"ebp": 0x5000}, memory.__getitem__, 32) == 0x6000


def test_a_register_rule_starts_with_the_cfa_pushed():
    assert evaluate((("DW_OP_plus_uconst", (8,)),), {}, None, 64, initial=(0x100,)) == 0x108


def test_arithmetic_wraps_at_the_word():
    ops = (("DW_OP_lit0", ()), ("DW_OP_lit1", ()), ("DW_OP_minus", ()))
    assert evaluate(ops, {}, None, 32) == 0xFFFFFFFF


@pytest.mark.parametrize("ops", [(("DW_OP_breg3", (0,)),), (("DW_OP_call_frame_cfa", ()),), ()])
def test_what_cannot_be_evaluated_is_refused(ops):
    with pytest.raises(CfiUnsupported):
        evaluate(ops, {"rsp": 1}, None, 64)
