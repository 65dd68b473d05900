"""The vDSO's CFA rows (kernel_model/vdso/cfa_rows.py) are the stack depth of the code: for any
straight-line mix of pushes, pops, `call here; pop` and instructions that leave the stack
alone, assembled by keystone, the rows are where a running count of pushed words changes; a
conditional jump over a balanced push/pop meets its target at the depth it left from; code that
moves the stack pointer otherwise is refused rather than described wrongly."""
import pytest
from hypothesis import given, settings, strategies as st

from kernel_model.vdso.assemble import assemble
from kernel_model.vdso.cfa_rows import cfa_rows

REGISTER = {"x86_64": ("rbx", "rcx"), "i386": ("ebx", "ecx")}
STEPS = ("push", "pop", "nop", "mov", "callpop")


def _program(arch, steps):
    """(assembly, expected rows) for `steps`, skipping pops that would go below the return
    address."""
    word = 8 if arch == "x86_64" else 4
    saved, scratch = REGISTER[arch]
    lines, depths, depth = [], [], word
    for index, step in enumerate(steps):
        if step == "pop" and depth == word:
            step = "nop"
        text = {"push": [f"push {saved}"], "pop": [f"pop {saved}"], "nop": ["nop"],
                "mov": [f"mov {scratch}, 1"],
                "callpop": [f"call here{index}", f"here{index}:", f"pop {scratch}"]}[step]
        for line in text:
            if not line.endswith(":"):
                depths.append(depth)
                depth += {"push": word, "pop": -word, "call": word}.get(line.split()[0], 0)
            lines.append(line)
    depths.append(depth)
    lines.append("ret")
    return "\n".join(lines), depths


def _rows_of(arch, text, depths):
    import capstone
    mode = capstone.CS_MODE_64 if arch == "x86_64" else capstone.CS_MODE_32
    code = assemble(arch, text)
    addresses = [insn.address for insn in capstone.Cs(capstone.CS_ARCH_X86, mode).disasm(code, 0)]
    assert len(addresses) == len(depths)
    rows, last = [], None
    for address, depth in zip(addresses, depths):
        if depth != last:
            rows.append((address, depth))
            last = depth
    return code, tuple(rows)


@settings(max_examples=60, deadline=None)
@given(arch=st.sampled_from(sorted(REGISTER)), steps=st.lists(st.sampled_from(STEPS), max_size=24))
def test_rows_follow_the_pushed_words(arch, steps):
    text, depths = _program(arch, ["push"] + steps)       # every example moves the CFA
    code, expected = _rows_of(arch, text, depths)
    assert len(expected) >= 2 and cfa_rows(arch, code) == expected


@pytest.mark.parametrize("arch", sorted(REGISTER))
def test_a_jump_meets_its_target_at_the_depth_it_left(arch):
    saved, _ = REGISTER[arch]
    word = 8 if arch == "x86_64" else 4
    code = assemble(arch, f"push {saved}\n test eax, eax\n jz out\n push {saved}\n pop {saved}\n"
                          f" out:\n pop {saved}\n ret\n")
    rows = cfa_rows(arch, code)
    assert [depth for _, depth in rows] == [word, 2 * word, 3 * word, 2 * word, word]


@pytest.mark.parametrize("arch", sorted(REGISTER))
def test_code_moving_the_stack_pointer_otherwise_is_refused(arch):
    sp = "rsp" if arch == "x86_64" else "esp"
    with pytest.raises(ValueError, match="moves the stack pointer"):
        cfa_rows(arch, assemble(arch, f"sub {sp}, 16\n ret\n"))
