"""Property of seccomp's classic-BPF filters (hypothesis): a filter compiled from a list of rules
(the first rule whose test holds gives the call its action, else a default), each rule's test on a
word of struct seccomp_data (equal, masked equal, at least, any bit set, equal after an addition,
equal through a scratch slot and X), passes the load-time checks, and the interpreter's verdict
on any call is the rules' own answer; stacked filters give the action that sorts lowest as a
signed number, the newest filter's on a tie (kernel/seccomp.c seccomp_run_filters)."""
import struct

from hypothesis import given, settings, strategies as st

from kernel_model.seccomp import cbpf as B
from kernel_model.seccomp.data import seccomp_data
from kernel_model.seccomp.enforce import verdict
from kernel_model.seccomp.install import Filter

WORDS = [0, 1, 2, 39, 1000, 0x7FFF_FFFF, 0x8000_0000, 0xFFFF_FFFF]
FIELDS = [0, 4, 8, 12] + [16 + 4 * i for i in range(12)]    # nr, arch, ip lo/hi, args lo/hi
ACTIONS = [0x8000_0000, 0, 0x0003_0000, 0x0005_0000, 0x7FF0_0000, 0x7FFC_0000, 0x7FFF_0000]
REACHED = {kind: False for kind in ("eq", "masked", "ge", "set", "add", "scratch")}
REACHED.update(default=False, tie=False)
M32 = 0xFFFF_FFFF

word = st.sampled_from(WORDS) | st.integers(0, M32)
rule = st.tuples(st.sampled_from(sorted(k for k in REACHED if k not in ("default", "tie"))),
                 st.sampled_from(FIELDS), word, word,
                 st.tuples(st.sampled_from(ACTIONS), st.integers(0, 0xFFFF)))
rule_list = st.tuples(st.lists(rule, min_size=0, max_size=5),
                      st.tuples(st.sampled_from(ACTIONS), st.integers(0, 0xFFFF)))


def insn(code, k=0, jt=0, jf=0) -> bytes:
    return B.INSN.pack(code, jt, jf, k & M32)


def holds(kind: str, value: int, a: int, b: int) -> bool:
    if kind == "masked":
        return value & a == b & a
    if kind == "ge":
        return value >= a
    if kind == "set":
        return bool(value & a)
    if kind == "add":
        return (value + a) & M32 == b
    return value == a                                       # eq, scratch


def compile_rule(kind: str, field: int, a: int, b: int, ret: int) -> bytes:
    load = insn(B.LD | B.W | B.ABS, field)
    if kind == "masked":
        test = insn(B.ALU | B.AND | B.K, a) + insn(B.JMP | B.JEQ | B.K, b & a, 0, 1)
    elif kind == "ge":
        test = insn(B.JMP | B.JGE | B.K, a, 0, 1)
    elif kind == "set":
        test = insn(B.JMP | B.JSET | B.K, a, 0, 1)
    elif kind == "add":
        test = insn(B.ALU | B.ADD | B.K, a) + insn(B.JMP | B.JEQ | B.K, b, 0, 1)
    elif kind == "scratch":          # A -> M[5] -> X, compared with A = a through JEQ X
        test = insn(B.ST, 5) + insn(B.LDX | B.MEM, 5) + insn(B.LD | B.IMM, a) \
            + insn(B.JMP | B.JEQ | B.X, 0, 0, 1)
    else:
        test = insn(B.JMP | B.JEQ | B.K, a, 0, 1)
    return load + test + insn(B.RET | B.K, ret)


def answer(rules, default: int, data: bytes) -> int:
    for kind, field, a, b, (action, errno) in rules:
        if holds(kind, struct.unpack_from("<I", data, field)[0], a, b):
            REACHED[kind] = True
            return action | errno
    REACHED["default"] = True
    return default


def signed(action: int) -> int:
    return action - (1 << 32) if action & 0x8000_0000 else action


@settings(max_examples=300, deadline=None)
@given(st.lists(rule_list, min_size=1, max_size=3), st.sampled_from(["x86_64", "i386"]),
       st.sampled_from(WORDS), st.integers(0, (1 << 64) - 1),
       st.lists(st.sampled_from(WORDS) | st.integers(0, (1 << 64) - 1), min_size=6, max_size=6))
def test_a_filter_answers_as_its_rules(stack, abi, nr, ip, args):
    data = seccomp_data(abi, nr, ip, args)
    filters, answers = [], []
    for rules, (action, errno) in stack:
        raw = b"".join(compile_rule(*r[:4], r[4][0] | r[4][1]) for r in rules) \
            + insn(B.RET | B.K, action | errno)
        program = B.check_filter(raw)
        expected = answer(rules, action | errno, data)
        assert B.run(program, data) == expected
        filters.append(Filter(program, False))
        answers.append(expected)
    lowest = min(signed(a & 0xFFFF_0000) for a in answers)
    firsts = [a for a in answers if signed(a & 0xFFFF_0000) == lowest]
    REACHED["tie"] |= len(firsts) > 1 and len(set(firsts)) > 1
    assert verdict(filters, data) == firsts[0]              # filters: newest first


def test_the_interesting_cases_were_reached():
    """Run after the property (file order): every kind of rule decided a call, the default
    did, and stacked filters tied on an action with different data."""
    test_a_filter_answers_as_its_rules()
    assert all(REACHED.values()), REACHED
