"""Operand forms of each instruction class: the templates the property tests instantiate.

They sit next to the policy (policy.RULES refers to them) so that the tables that decide how
an instruction is relocated are also the tables that generate the instructions that test it.

A form is Intel syntax (assembled with keystone) or, after "hex:", raw bytes (branches, whose
exact encoding — rel8 vs rel32, prefixes — is the point of the test). Placeholders:
  {r}    a full-width GPR other than the stack pointer     {r32}  its 32-bit name
  {r8}   al/bl/cl/dl        {r8h} ah/bh/ch/dh (not encodable with REX: tests the REX handling)
  {p}    a full-width GPR the test points into a data page before running
  {sp}   esp/rsp            {w}   dword/qword (the native word)
  {d8}   signed 8-bit displacement   {imm8} 0..31   {imm32} signed 32-bit   {imm16} 0..64, even
  {nest} 0..3 (enter's nesting level)   {abs} an absolute address inside a data page
  {rip}  "[rip + DISP]" (x86-64): the test rewrites DISP so the operand hits a data page
  {cc}   a condition code 0..f       {rel8} {rel32}  raw little-endian branch displacements
Registers in `pointers`, `frames` and `counts` are named as on i386 (the test widens them):
pointers hold an address in a data page, frames an address in the stack (enter/leave read
through ebp), counts a small value (rep prefixes).
"""
from dataclasses import dataclass

ARCHES = ("i386", "x86_64")
X64 = ("x86_64",)


@dataclass(frozen=True)
class Form:
    text: str
    arches: tuple[str, ...] = ARCHES
    pointers: tuple[str, ...] = ()
    frames: tuple[str, ...] = ()
    counts: tuple[str, ...] = ()

    @property
    def is_hex(self) -> bool:
        return self.text.startswith("hex:")


PLAIN_FORMS = (
    Form("mov {r}, {r}"), Form("add {r}, {imm32}"), Form("sub {r}, {r}"),
    Form("xor {r32}, {r32}"), Form("imul {r}, {r}, {imm8}"), Form("mul {r}"),
    Form("shl {r}, cl"), Form("rol {r}, {imm8}"), Form("cmovne {r}, {r}"), Form("setb {r8}"),
    Form("bswap {r32}"), Form("movzx {r32}, {r8h}"), Form("lea {r}, [{p} + {r}*4 + {d8}]"),
    Form("mov {w} ptr [{p} + {d8}], {r}"), Form("add {r}, {w} ptr [{p} + {d8}]"),
    Form("cmpxchg {w} ptr [{p} + {d8}], {r}"), Form("lock xadd {w} ptr [{p} + {d8}], {r}"),
    Form("xchg {r}, {w} ptr [{p} + {d8}]"), Form("push {r}"), Form("pop {r}"),
    Form("push {imm32}"), Form("push {w} ptr [{p} + {d8}]"), Form("nop"), Form("cdq"),
    Form("cqo", X64), Form("enter {imm16}, 0"), Form("enter {imm16}, {nest}", frames=("ebp",)),
    Form("leave", frames=("ebp",)),
    Form("rep movsb", pointers=("esi", "edi"), counts=("ecx",)),
    Form("rep stosd", pointers=("edi",), counts=("ecx",)),
    Form("cmpsb", pointers=("esi", "edi")), Form("lodsb", pointers=("esi",)),
    Form("mov eax, dword ptr [{abs}]", ("i386",)),     # absolute: position-independent
)

RIP_RELATIVE_FORMS = tuple(Form(t, X64) for t in (
    "mov {r}, qword ptr {rip}", "mov qword ptr {rip}, {r}", "mov dword ptr {rip}, {imm32}",
    "lea {r}, {rip}", "add {r}, qword ptr {rip}", "cmp byte ptr {rip}, {imm8}",
    "imul {r}, qword ptr {rip}, {imm32}", "mul qword ptr {rip}", "shl qword ptr {rip}, cl",
    "cmpxchg qword ptr {rip}, {r}", "lock xadd qword ptr {rip}, {r}", "xchg {r}, qword ptr {rip}",
    "movzx {r32}, byte ptr {rip}", "movsxd {r}, dword ptr {rip}", "mov {r8h}, byte ptr {rip}",
    "inc dword ptr {rip}", "test byte ptr {rip}, {imm8}", "bt qword ptr {rip}, {imm8}",
    "cmpxchg16b xmmword ptr {rip}", "movaps xmm0, xmmword ptr {rip}",
    "push qword ptr {rip}", "pop qword ptr {rip}",
))

JMP_REL_FORMS = (Form("hex:eb {rel8}"), Form("hex:e9 {rel32}"))
JCC_FORMS = (Form("hex:7{cc} {rel8}"), Form("hex:0f 8{cc} {rel32}"))
LOOP_FORMS = (
    Form("hex:e2 {rel8}"), Form("hex:e1 {rel8}"), Form("hex:e0 {rel8}"),   # loop/loope/loopne
    Form("hex:e3 {rel8}"),                                                  # jecxz / jrcxz
    Form("hex:67 e3 {rel8}"), Form("hex:67 e2 {rel8}"),   # cx/ecx-sized counter (addr size)
)
CALL_REL_FORMS = (Form("hex:e8 {rel32}"), Form("hex:e8 00 00 00 00"))     # call $+5: get-pc
CALL_INDIRECT_FORMS = (
    Form("call {r}"), Form("call {sp}"), Form("call {w} ptr [{p} + {d8}]"),
    Form("call {w} ptr [{sp} + {d8}]"), Form("call qword ptr {rip}", X64),
)
JMP_INDIRECT_FORMS = (
    Form("jmp {r}"), Form("jmp {w} ptr [{p} + {d8}]"), Form("jmp {w} ptr [{sp} + {d8}]"),
    Form("jmp qword ptr {rip}", X64), Form("hex:3e ff e0"),        # notrack jmp eax/rax
)
RET_FORMS = (Form("ret"), Form("ret {imm16}"), Form("hex:f3 c3"))   # repz ret (AMD idiom)
