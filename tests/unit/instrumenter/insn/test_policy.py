"""classify(): every table entry with a hand-picked instruction, and the strategy tables."""
import pytest

from instrumenter.insn.decode import decode
from instrumenter.insn.policy import (RULES, STRATEGIES, InsnClass, classify, emulate_rule_for,
                                 forms_of, patched_range_conflict, strategies_for)

C = InsnClass
CASES = [   # (arch, hex bytes, class, rule name)
    ("x86_64", "4889e5", C.PLAIN, "plain"),                       # mov rbp, rsp
    ("i386", "c8100002", C.PLAIN, "plain"),                       # enter 16, 2
    ("i386", "a110203040", C.PLAIN, "plain"),                     # mov eax, [abs]
    ("x86_64", "488b0510000000", C.RIP_RELATIVE, "rip_relative"),
    ("x86_64", "488d0d00000000", C.RIP_RELATIVE, "rip_relative"),  # lea rcx, [rip]
    ("x86_64", "eb05", C.JMP_REL, "jmp_rel"), ("i386", "e900010000", C.JMP_REL, "jmp_rel"),
    ("x86_64", "7405", C.JCC_REL, "jcc_rel"), ("i386", "0f8f00010000", C.JCC_REL, "jcc_rel"),
    ("x86_64", "e2fe", C.LOOP_JECXZ, "loop_jecxz"), ("i386", "e3fe", C.LOOP_JECXZ, "loop_jecxz"),
    ("x86_64", "67e3fe", C.LOOP_JECXZ, "loop_jecxz"),              # jecxz in 64-bit mode
    ("i386", "e800000000", C.CALL_REL, "call_rel"),               # call $+5 (get-pc)
    ("x86_64", "ffd0", C.CALL_INDIRECT, "call_indirect"),
    ("x86_64", "ff1510000000", C.CALL_INDIRECT, "call_indirect"),  # call [rip+0x10]
    ("i386", "65ff1510000000", C.CALL_INDIRECT, "call_indirect"),  # call gs:[0x10]
    ("x86_64", "3effe0", C.JMP_INDIRECT, "jmp_indirect"),          # notrack jmp rax
    ("x86_64", "ff2510000000", C.JMP_INDIRECT, "jmp_indirect"),    # PLT: jmp [rip+0x10]
    ("x86_64", "c3", C.RET, "ret"), ("i386", "c20800", C.RET, "ret"),
    ("x86_64", "f3c3", C.RET, "ret"),
    ("x86_64", "cc", C.REFUSED, "breakpoint"), ("i386", "cd80", C.REFUSED, "software_interrupt"),
    ("x86_64", "0f05", C.REFUSED, "fast_syscall"), ("i386", "0f34", C.REFUSED, "fast_syscall"),
    ("x86_64", "0f0b", C.REFUSED, "undefined_opcode"),
    ("i386", "9a000000001000", C.REFUSED, "far_transfer"),         # lcall
    ("x86_64", "cb", C.REFUSED, "far_transfer"), ("x86_64", "48cf", C.REFUSED, "far_transfer"),
    ("x86_64", "ff1c2500000000", C.REFUSED, "far_indirect"),       # call far [0]
    ("x86_64", "e410", C.REFUSED, "io_and_msr"), ("x86_64", "f4", C.REFUSED, "privileged"),
    ("x86_64", "0f22d8", C.REFUSED, "privileged"),                 # mov cr3, rax
    ("i386", "8ed0", C.REFUSED, "ss_load"), ("i386", "17", C.REFUSED, "ss_load"),
    ("x86_64", "c7f800000000", C.REFUSED, "transaction_begin"),
    ("i386", "6200", C.REFUSED, "bound_check"),
    ("i386", "66c3", C.REFUSED, "operand_size_branch"),
    ("x86_64", "678b0510000000", C.REFUSED, "rip_address_size"),
]


@pytest.mark.parametrize("arch,code,cls,rule", CASES, ids=[f"{a}-{c}" for a, c, *_ in CASES])
def test_classification(arch, code, cls, rule):
    got = classify(decode(bytes.fromhex(code), 0x401000, arch))
    assert (got.cls, got.rule.name) == (cls, rule)
    assert got.reason


def test_every_rule_has_a_reason_and_refusals_name_only_known_strategies():
    for rule in RULES:
        assert len(rule.reason) > 20, rule.name
        assert set(rule.alternatives) <= set(STRATEGIES)
        if rule.cls is not C.REFUSED:
            assert not rule.alternatives


def test_every_relocatable_class_has_generator_forms_on_some_arch():
    for cls in C:
        if cls is not C.REFUSED:
            assert forms_of(cls, "i386") or forms_of(cls, "x86_64"), cls
    assert not forms_of(C.RIP_RELATIVE, "i386")      # no RIP-relative addressing on i386


@pytest.mark.parametrize("arch,code,name", [
    ("x86_64", "55", "push_fp64"), ("i386", "5d", "pop_fp"), ("x86_64", "53", "push_reg"),
    ("i386", "c9", "leave"), ("x86_64", "c20800", "ret"), ("x86_64", "7405", "jcc_rel"),
    ("i386", "e800000000", "call_rel"), ("x86_64", "90", "nop"), ("x86_64", "eb00", "jmp_rel"),
    ("x86_64", "ff3510000000", "push_rip"), ("x86_64", "0f05", "syscall"),
    ("i386", "cd80", "int80"), ("x86_64", "cd80", "int80"),
])
def test_emulate_rules(arch, code, name):
    assert emulate_rule_for(decode(bytes.fromhex(code), 0x1000, arch)).name == name


def test_emulate_does_not_take_memory_or_indirect_forms():
    for arch, code in (("x86_64", "ff30"), ("x86_64", "ffd0"), ("x86_64", "488b0510000000"),
                       ("i386", "cd81"), ("x86_64", "ff742408")):
        assert emulate_rule_for(decode(bytes.fromhex(code), 0x1000, arch)) is None


def test_strategies_for():
    at = lambda code, arch="x86_64": decode(bytes.fromhex(code), 0x1000, arch)  # noqa: E731
    assert strategies_for(at("55")) == ("emulate", "trampoline", "singlestep")
    assert strategies_for(at("488b0510000000")) == ("trampoline", "singlestep")
    assert strategies_for(at("0f05")) == ("emulate", "singlestep")      # the kernel runs it
    assert strategies_for(at("cd80", "i386")) == ("emulate", "singlestep")
    assert strategies_for(at("ff3510000000")) == ("emulate", "trampoline", "singlestep")
    assert strategies_for(at("cc")) == ()


def test_patched_range_conflicts_for_the_jump_strategy():
    at = lambda code, addr: decode(bytes.fromhex(code), addr, "x86_64")        # noqa: E731
    rip_read = at("488b05f9ffffff", 0x1000)                      # mov rax, [rip-7]: itself
    assert "reads the patched" in patched_range_conflict(rip_read, 0x1000, 0x1005)
    assert "branches into" in patched_range_conflict(at("eb01", 0x1000), 0x1000, 0x1005)
    assert "return address" in patched_range_conflict(at("ffd0", 0x1000), 0x1000, 0x1005)
    assert patched_range_conflict(at("e800000000", 0x1000), 0x1000, 0x1005) is None
    assert patched_range_conflict(at("4889e5", 0x1000), 0x1000, 0x1005) is None
