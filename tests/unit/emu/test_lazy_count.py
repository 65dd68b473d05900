"""emu.lazy_count: the block clock's count is Unicorn's per-instruction count at every event a
tool can read it at (traps, faults in the middle of a block, the end of each run), so `trace`
records keep their `ts` without Unicorn's counting hook on code no probe touches (issue 31)."""
from hypothesis import given, settings
from hypothesis import strategies as st

from emu import block_clock, exits
from emu.icount import InstructionClock
from emu.lazy_count import BlockCount

from .guest import CODE, DATA, STACK_SP, asm, machine_with

UNMAPPED = 0x50000                  # a store here faults (guest.py maps CODE, DATA, STACK)
_FILLER = ("inc eax", "add ecx, 3", "nop", "mov dword ptr [{data}], eax", "lea edx, [eax + 4]")
_EVENTS = ("int3", "ud2", "store", "syscall", "div")
DIV_ESI = b"\xf7\xf6"               # esi is never set: #DE in the middle of its block


def _program(arch: str, segments) -> str:
    lines = []
    for index, (fillers, loop, event, after) in enumerate(segments):
        lines += [_FILLER[f].format(data=DATA) for f in fillers]
        if loop:
            lines += [f"mov ebx, {loop}", f"l{index}: dec ebx", f"jnz l{index}"]
        lines.append({"int3": "int3", "ud2": "ud2", "div": "div esi",
                      "store": f"mov dword ptr [{UNMAPPED}], eax",
                      "syscall": "syscall" if arch == "x86_64" else "int 0x80"}[event])
        lines += [_FILLER[f].format(data=DATA) for f in after]
    lines.append("hlt")
    return "; ".join(lines)


class _Harness:
    """Runs a program to its hlt: every event continues past its instruction (a fault by a new
    run after it), and the count is read at each event and after each run."""

    def __init__(self, arch: str, source: str, *, exact: bool):
        self.m = m = machine_with(arch, source)
        self.arch, self.seen = arch, []
        if exact:
            m.exact_count_users.add(self)       # force Unicorn's counting hook
        m.count_instructions(InstructionClock())
        m.trap_handler = self._on_trap
        m.syscall_handler = self._on_syscall

    def _on_trap(self, vector, pc):
        self.seen.append(("trap", vector, self.m.instructions_retired))
        if vector == 6:                          # ud2: a fault, go past its two bytes
            self.m.pc = pc + 2
        if vector == 0 and self.m.mem.read(pc, 2) == DIV_ESI:
            self.m.pc = pc + 2    # handled in the run, as the kernel's RDTSC on #GP (tsc.py)
            return True
        return vector != 1 and vector != 13      # hlt is #GP in user mode: stop there

    def _on_syscall(self, pc):
        self.seen.append(("syscall", self.m.instructions_retired))
        return True

    def run(self) -> list:
        m, pc = self.m, CODE
        m.sp = STACK_SP
        for _ in range(100):
            exit_ = m.run(pc)
            self.seen.append(("end", exit_.kind, m.instructions_retired))
            if exit_.kind != exits.FAULT:
                return self.seen
            pc = exit_.pc + len(asm(f"mov dword ptr [{UNMAPPED}], eax", self.arch, exit_.pc))
        raise AssertionError("the program did not end")


_segments = st.lists(st.tuples(st.lists(st.integers(0, len(_FILLER) - 1), max_size=4),
                               st.sampled_from([0, 0, 3]), st.sampled_from(_EVENTS),
                               st.lists(st.integers(0, len(_FILLER) - 1), max_size=3)),
                     min_size=1, max_size=6)


@settings(max_examples=60, deadline=None)
@given(segments=_segments, arch=st.sampled_from(["i386", "x86_64"]))
def test_the_block_count_is_unicorns_count_at_every_event(segments, arch):
    source = _program(arch, segments)
    exact = _Harness(arch, source, exact=True)
    lazy = _Harness(arch, source, exact=False)
    assert isinstance(lazy.m._blocks, BlockCount) and exact.m._live is not lazy.m._blocks
    cuts = []
    original = lazy.m._blocks.fault_at

    def fault_at(pc):
        before = lazy.m._blocks.offset
        original(pc)
        cuts.append(lazy.m._blocks.offset - before)
    lazy.m._blocks.fault_at = fault_at
    assert lazy.run() == exact.run()
    # A faulting store or division with instructions after it in its block was cut off there
    # (the case the block clock alone would miscount; ud2 ends its block, as traps do).
    if any(event in ("store", "div") and after for _, _, event, after in segments):
        assert any(cuts)


def test_a_fault_in_the_middle_of_a_block_counts_up_to_the_faulting_instruction(arch):
    assert block_clock.available()
    source = f"inc eax; inc eax; mov dword ptr [{UNMAPPED}], eax; inc eax; inc eax; hlt"
    h = _Harness(arch, source, exact=False)
    exit_ = h.m.run(CODE)
    assert exit_.kind == exits.FAULT and h.m.instructions_retired == 3
    assert h.m._live is h.m._blocks


def test_a_fault_handled_inside_the_run_leaves_its_block_for_good(arch):
    """glibc's ld.so runs RDTSC in the middle of a block; the kernel emulates it on #GP and the
    run goes on past it (a #DE handled so here): the block's rest never ran, also once later
    blocks have begun."""
    source = "inc eax; div esi; inc eax; inc eax; int3; inc eax; int3; hlt"
    exact, lazy = (_Harness(arch, source, exact=e) for e in (True, False))
    assert lazy.run() == exact.run()
    assert lazy.seen[0] == ("trap", 0, 2) and lazy.seen[1] == ("trap", 3, 5)
    assert lazy.seen[2] == ("trap", 3, 7)


def test_a_code_hook_that_stops_inside_a_block_keeps_unicorns_count(arch):
    """A code breakpoint, a watchpoint or a LOCK-prefix site stops inside a block, where the
    block clock cannot: such a Machine runs with Unicorn's counting hook."""
    m = machine_with(arch, "inc eax; inc eax; inc eax; int3")
    m.count_instructions(InstructionClock())
    m.trap_handler = lambda vector, pc: False
    m.lock_sites.trap(CODE + 1)
    m.run(CODE)
    assert m._live is not m._blocks and m.instructions_retired == 4
    m.lock_sites.untrap(CODE + 1)
    assert not m.exact_count_users
