"""Unicorn errata that emu/ does NOT correct, shown as they are (emu/errata.py's docstring says
why). A test here failing after a Unicorn upgrade means the erratum is gone: drop what works
around it (the flag mask in tests/property/test_probe_equivalence.py)."""
from unicorn import UC_ARCH_X86, UC_HOOK_CODE, UC_MODE_64, Uc
from unicorn import x86_const as X

CODE, DATA = 0x400000, 0x600100
IMUL = b"\x48\x6b\xc0\x00"                                   # imul rax, rax, 0: CF = OF = 0
CF, OF, ZF = 0x1, 0x800, 0x40


def _flags_after_imul_then_cmpxchg16b(*, code_hook: bool) -> int:
    uc = Uc(UC_ARCH_X86, UC_MODE_64)
    uc.mem_map(CODE, 0x1000, 7)
    uc.mem_map(DATA & ~0xFFF, 0x1000, 3)
    cmpxchg16b = b"\x48\x0f\xc7\x0d" + (DATA - (CODE + 12)).to_bytes(4, "little", signed=True)
    uc.mem_write(CODE, IMUL + cmpxchg16b)                     # cmpxchg16b [rip + d] = [DATA]
    uc.mem_write(DATA, bytes(range(1, 17)))                   # != rdx:rax: ZF = 0
    if code_hook:
        uc.hook_add(UC_HOOK_CODE, lambda *args: None, None, CODE, CODE + 0x100)
    uc.emu_start(CODE, CODE + 12)
    return uc.reg_read(X.UC_X86_REG_RFLAGS)


def test_cmpxchg16b_keeps_cf_and_of_without_a_code_hook():
    assert _flags_after_imul_then_cmpxchg16b(code_hook=False) & (CF | OF | ZF) == 0


def test_cmpxchg16b_under_a_code_hook_corrupts_the_flags_it_should_keep():
    """The erratum: imul cleared CF and OF, cmpxchg16b must keep them; ZF is still right."""
    flags = _flags_after_imul_then_cmpxchg16b(code_hook=True)
    assert flags & (CF | OF) == CF | OF and not flags & ZF
