"""The Machine's C interrupt hook for int3 sites (emu/int3_sites.py, native/int3_sites.c):
it takes an int3 at a site of its table only while everything the Python path would ask per
hit has the answer "take it", and sends every other int3 through the Python path, whatever
changed: the #BP gate, a gate on the space, an on_kernel_entry, the site's redirect, ring 0.
Its table (open addressing, backward-shift deletion) against a set as its model."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from emu.machine import Machine
from kernel_model.cpu import idt as V
from tests.unit.kernel_model.userland import USER_CODE, USER_SP, user_program

SOURCE = "mov eax, 1; site: int3; nop; nop; target: mov ebx, 2; end: int3"


@pytest.fixture(params=["i386", "x86_64"])
def arch(request):
    return request.param


def _program(arch):
    """The program, a #BP gate that stops at `end` (and sends `site` on to `target` on the
    full path), and a native breakpoint at `site`: calls counted per path."""
    prog = user_program(arch, SOURCE, labels=("site", "target", "end"))
    site, target = prog.labels["site"], prog.labels["target"]
    calls = {"full": 0, "redirect": 0, "native": 0}

    def on_breakpoint(frame):
        if frame.ip - 1 != site:
            return False
        calls["full"] += 1
        frame.ip = target
        return True
    prog.space.idt.set_gate(V.BP, on_breakpoint, dpl=3)

    def redirect():
        calls["redirect"] += 1
        return target

    def hit():
        calls["native"] += 1
        return target
    assert prog.space.traps.set_native_breakpoint(site, redirect, hit)
    return prog, calls


def _run(prog, arch):
    prog.machine.run(prog.machine.pc)
    assert prog.machine.reg("ebx" if arch == "i386" else "rbx") == 2   # reached `target`


def test_a_site_s_int3_is_taken_in_c(arch):
    prog, calls = _program(arch)
    _run(prog, arch)
    assert calls == {"full": 0, "redirect": 0, "native": 1}
    assert prog.machine.int3_sites().taken == 1


def test_a_gate_on_the_space_sends_it_to_the_python_path(arch):
    prog, calls = _program(arch)
    prog.space.traps.arm_native_breakpoints(False)
    _run(prog, arch)
    assert calls == {"full": 0, "redirect": 1, "native": 0}
    prog.space.traps.arm_native_breakpoints(True)
    assert prog.machine.int3_sites().armed


def test_an_on_kernel_entry_sees_the_int3_first(arch):
    prog, calls = _program(arch)
    entries = []
    prog.machine.on_kernel_entry = lambda: entries.append(1)
    _run(prog, arch)
    assert calls["native"] == 0 and calls["redirect"] == 1 and entries
    prog.machine.on_kernel_entry = None
    assert not prog.machine.int3_sites().state_kernel_entry


def test_a_new_bp_gate_empties_the_table(arch):
    prog, calls = _program(arch)
    seen = []
    prog.space.idt.set_gate(V.BP, lambda frame: seen.append(frame.ip) or False, dpl=3)
    assert len(prog.machine.int3_sites()) == 0
    prog.machine.run(prog.machine.pc)
    assert calls == {"full": 0, "redirect": 0, "native": 0} and seen == [prog.labels["site"] + 1]


def test_a_new_redirect_takes_the_site_out_of_the_table(arch):
    prog, calls = _program(arch)
    prog.space.traps.set_breakpoint_redirect(prog.labels["site"], lambda: None)   # declines
    _run(prog, arch)
    assert calls == {"full": 1, "redirect": 0, "native": 0}


def test_ring0_int3_goes_to_the_python_path():
    prog = user_program("i386", "push 0x1234; site: int3; pop ebx; int 0x80", labels=("site",),
                        enter=False)
    m, space = prog.machine, prog.space
    m.set_reg("cs", space.selectors.kernel_cs)
    m.set_reg("ss", space.selectors.kernel_ds)
    m.sp = USER_SP
    full = []
    space.idt.set_gate(V.BP, lambda frame: full.append(frame.ip) or True, dpl=3)
    space.idt.set_gate(V.SYSCALL_VECTOR, lambda frame: False, dpl=3)
    assert space.traps.set_native_breakpoint(prog.labels["site"], lambda: None,
                                             lambda: pytest.fail("taken in C"))
    m.run(USER_CODE)
    assert full == [prog.labels["site"] + 1]


def test_a_hit_that_raises_stops_the_run_with_its_exception(arch):
    prog, _ = _program(arch)
    sites = prog.machine.int3_sites()

    def failing():
        try:
            raise ValueError("the action failed")
        except ValueError as error:
            sites.failed(error)
            return 0
    sites.set(prog.labels["site"], failing)
    with pytest.raises(ValueError, match="the action failed"):
        prog.machine.run(prog.machine.pc)
    assert prog.machine.pc == prog.labels["site"] + 1      # where the int3 left it


def test_a_site_s_count_is_added_one_per_hit_that_gave_an_ip(arch):
    """The tool's count of hits taken (the door's "int3_fast") is kept in C: a hit that gave
    the IP adds one, a hit that failed (0) adds none."""
    import ctypes
    for gives, counted in ((True, 1), (False, 0)):
        prog, _ = _program(arch)
        sites, count = prog.machine.int3_sites(), ctypes.c_uint64(5)

        def hit():
            if gives:
                return prog.labels["target"]
            sites.failed(ValueError("the action failed"))
            return 0
        assert sites.set(prog.labels["site"], hit, count)
        try:
            prog.machine.run(prog.machine.pc)
        except ValueError:
            assert not gives
        assert sites.taken == 1
        assert count.value == 5 + counted


@pytest.mark.parametrize("unicorn_count", [False, True])
def test_a_hit_reads_the_clock_the_c_hook_computed(arch, unicorn_count):
    """Inside a hit the C hook took, hit_clock holds what read_clock() gives (for a record's
    ts, emu/clock_parts.py), with the block clock and with Unicorn's count (a code hook in
    a block makes the Machine count with Unicorn's); -1 outside a hit, before and after."""
    from emu.icount import InstructionClock
    prog, _ = _program(arch)
    m = prog.machine
    clock = InstructionClock()
    clock.add(1000)                      # slices of other Machines sharing the clock
    m.count_instructions(clock)
    if unicorn_count:
        m.exact_count_users.add("test")
    seen = []

    def hit():
        assert (m._live is m._blocks) is not unicorn_count      # the clock asked for
        seen.append((m.hit_clock.value, m.read_clock()))
        return prog.labels["target"]
    assert m.int3_sites().set(prog.labels["site"], hit)
    assert m.hit_clock.value == -1
    _run(prog, arch)
    assert m.hit_clock.value == -1
    assert len(seen) == 1 and seen[0][0] == seen[0][1] == 1002, seen   # mov, int3


@settings(max_examples=50, deadline=None)
@given(ops=st.lists(st.tuples(st.booleans(), st.integers(0, 300)), max_size=400))
def test_the_table_holds_what_a_set_holds(ops):
    """Adds and removals of addresses 16 bytes apart (up to 301 of them: the table grows from
    64 slots several times, and probe chains form), then every address asked."""
    sites = Machine("x86_64").int3_sites()
    model = set()
    for add, index in ops:
        address = 0x401000 + 16 * index
        if add:
            assert sites.set(address, lambda: 0)
            model.add(address)
        else:
            sites.clear(address)
            model.discard(address)
    for index in range(301):
        address = 0x401000 + 16 * index
        assert sites.holds(address) == (address in model), hex(address)
    assert len(sites) == len(model)


def test_a_site_set_inside_an_interrupt_s_hook_waits_for_the_next_run(arch):
    """A probe placed during an `int 0x80` call (a tool's syscall watcher): the C hook goes in
    only between runs, since Unicorn would hand it the interrupt under way too, and it would
    give it to the Python hook a second time (the call made twice, i386 fork_pipe's data
    corrupted before this was found)."""
    prog = user_program(arch, "int 0x80; site: int3; nop; target: mov ebx, 2; end: int3",
                        labels=("site", "target", "end"))
    site, target = prog.labels["site"], prog.labels["target"]
    calls = {"syscall": 0, "redirect": 0, "native": 0}

    def on_syscall(frame):
        calls["syscall"] += 1
        assert prog.space.traps.set_native_breakpoint(
            site, lambda: calls.__setitem__("redirect", calls["redirect"] + 1) or target,
            lambda: calls.__setitem__("native", calls["native"] + 1) or target)
        return True
    prog.space.idt.set_gate(V.SYSCALL_VECTOR, on_syscall, dpl=3)
    prog.space.idt.set_gate(V.BP, lambda frame: False, dpl=3)
    _run(prog, arch)
    assert calls == {"syscall": 1, "redirect": 1, "native": 0}
    assert not prog.machine.int3_sites().installed      # at the next run's start
