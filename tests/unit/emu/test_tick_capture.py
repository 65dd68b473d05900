"""emu.tick_capture: the timer's tick taken in C at the block clock's deadline (issue 18) — the
records' instruction counts, PCs, SPs and walked stacks; a tick without a rule, or with no room
left, is declined and stops the run as a plain deadline does; `stop_after` pauses the run;
`forget` drops the rules."""
from emu import exits
from emu.block_clock import clock_of
from emu.tick_capture import TickCapture

from .guest import CODE, STACK_SP, asm, machine_with

# Blocks: [call f] 1 | f: [mov ecx, N] + [dec; jnz] 2 each ... | [ret] 1 | [int3] 1. The loop's
# blocks begin after 2, 4, 6, ... instructions: the first block boundary at or after a tick.
PROGRAM = "call f; int3; f: mov ecx, {n}; l: dec ecx; jnz l; ret"


def _registers(arch):
    return ("eip", "esp") if arch == "i386" else ("rip", "rsp")


def _program(arch, n=100):
    m = machine_with(arch, PROGRAM.format(n=n))
    call = len(asm("call 0x10100", arch))                    # (the length of a near call)
    f = CODE + call + 1                                      # after `call f; int3`
    loop_top = f + len(asm("mov ecx, 1", arch, f))
    return m, CODE + call, loop_top


def _capture(m, arch, *, stack, interval, capacity=1 << 12):
    capture = TickCapture(m, _registers(arch), (), stack=stack, capacity=capacity)
    clock = clock_of(m)
    clock.attach_capture(capture, interval)
    clock.begin_run(interval)
    return capture, clock


def test_pc_mode_takes_every_tick_without_stopping_the_run(arch):
    m, _, loop_top = _program(arch)
    capture, clock = _capture(m, arch, stack=False, interval=10)
    assert m.run(CODE).kind == exits.TRAP                    # the whole program ran
    clock.end_run()
    records = capture.drain()
    word = 4 if arch == "i386" else 8
    # ticks due at 10, 20, ...: each taken where the next loop block begins (an even count)
    assert [r.executed for r in records] == [10 * k for k in range(1, 21)]
    assert {r.frames for r in records} == {(loop_top,)}
    assert {r.sp for r in records} == {STACK_SP - word}      # inside f: the return address pushed
    assert not clock.fired and capture.drain() == []


def test_a_tick_without_a_rule_is_declined_and_stops_the_run(arch):
    m, _, loop_top = _program(arch)
    capture, clock = _capture(m, arch, stack=True, interval=10)
    assert m.run(CODE).kind == exits.STOPPED and clock.fired
    assert capture.declined == "no rule" and capture.drain() == []
    assert m.pc == loop_top and clock.executed == 10         # where the kernel delivers it


def test_stack_mode_walks_with_the_rules_it_was_taught(arch):
    m, return_address, loop_top = _program(arch)
    ip, sp = _registers(arch)
    word = 4 if arch == "i386" else 8
    capture, clock = _capture(m, arch, stack=True, interval=10)
    # in f the CFA is SP + word and the return address is at CFA - word (no frame set up)
    assert capture.teach_plain(loop_top, sp, word, ((ip, -word),), ())
    assert capture.teach_outermost(return_address - 1)        # the caller's frame ends the walk
    assert capture.rules == 2
    assert m.run(CODE).kind == exits.TRAP and not clock.fired
    records = capture.drain()
    assert len(records) == 20
    assert {r.frames for r in records} == {(loop_top, return_address)}
    capture.forget()
    assert capture.rules == 0
    m2, _, _ = _program(arch)
    capture2, clock2 = _capture(m2, arch, stack=True, interval=10)
    assert capture2.teach_plain(loop_top, sp, word, ((ip, -word),), ())   # not the outermost
    assert m2.run(CODE).kind == exits.STOPPED and capture2.declined == "no rule"


def test_a_record_keeps_only_the_frames_inside_those_it_shares_with_the_one_before(arch):
    """Ticks in the same loop share the caller's frame: a record after the first of a drain
    buffers only its PC, and the drain takes the return address from the record before (its
    `shared`: never the PC of either); after a drain the next record is whole again."""
    m, return_address, loop_top = _program(arch)
    ip, sp = _registers(arch)
    word = 4 if arch == "i386" else 8
    capture, clock = _capture(m, arch, stack=True, interval=10)
    assert capture.teach_plain(loop_top, sp, word, ((ip, -word),), ())
    assert capture.teach_outermost(return_address - 1)
    capture.stop_after(3)
    assert m.run(CODE).kind == exits.STOPPED and clock.paused
    assert capture.buffered == (3 + 2) + 2 * (3 + 1)          # (three words, then the frames)
    clock.end_run()
    whole = (loop_top, return_address)
    assert capture.drain() == [(10, STACK_SP - word, whole, 0), (20, STACK_SP - word, whole, 1),
                               (30, STACK_SP - word, whole, 1)]
    clock.begin_run(clock.left)
    assert m.run(m.pc).kind == exits.STOPPED and clock.paused
    assert [(r.frames, r.shared) for r in capture.drain()] == [(whole, 0), (whole, 1), (whole, 1)]


def test_a_rule_naming_a_register_it_does_not_read_is_refused(arch):
    m, _, loop_top = _program(arch)
    capture, _ = _capture(m, arch, stack=True, interval=10)
    assert not capture.teach_plain(loop_top, "ebp" if arch == "i386" else "rbp", 16, (), ())
    assert capture.rules == 0


def test_stop_after_pauses_the_run_once_that_many_are_buffered(arch):
    m, _, loop_top = _program(arch)
    capture, clock = _capture(m, arch, stack=False, interval=10)
    capture.stop_after(2)
    assert m.run(CODE).kind == exits.STOPPED and clock.paused and not clock.fired
    clock.end_run()
    assert [r.executed for r in capture.drain()] == [10, 20] and m.pc == loop_top
    assert clock.left == 10                                   # the next tick: at 30
    clock.begin_run(clock.left)
    assert m.run(m.pc).kind == exits.STOPPED and clock.paused
    assert [r.executed for r in capture.drain()] == [30, 40]


def test_a_full_buffer_declines_the_tick(arch):
    m, _, _ = _program(arch)
    capture, clock = _capture(m, arch, stack=False, interval=10, capacity=8)   # two records
    assert m.run(CODE).kind == exits.STOPPED and clock.fired
    assert capture.declined == "buffer full"
    assert [r.executed for r in capture.drain()] == [10, 20] and clock.executed == 30


def test_a_tick_where_a_run_stopped_is_taken_with_the_same_walk(arch):
    """take_stopped (the host clock's ticks, issue 31): the run stopped at a block boundary and
    the tick is taken there, from the registers as the stop left them, with the caller's time;
    the record is the one the block clock's hook takes at that point."""
    m, return_address, loop_top = _program(arch)
    ip, sp = _registers(arch)
    word = 4 if arch == "i386" else 8
    capture = TickCapture(m, _registers(arch), (), stack=True, capacity=1 << 12)
    clock = clock_of(m)
    clock.begin_run(10)                         # a plain deadline: the run stops at the tick
    assert m.run(CODE).kind == exits.STOPPED and clock.fired and m.pc == loop_top
    clock.end_run()
    assert capture.take_stopped(m, m.pc, 123) == 0 and capture.declined == "no rule"
    assert capture.teach_plain(loop_top, sp, word, ((ip, -word),), ())
    assert capture.teach_outermost(return_address - 1)
    assert capture.take_stopped(m, m.pc, 123) == 1 and capture.declined == "taken"
    assert capture.drain() == [(123, STACK_SP - word, (loop_top, return_address), 0)]
    capture.stop_after(1)
    assert capture.take_stopped(m, m.pc, 456) == 2            # the batch the tool asked for
    assert [r.executed for r in capture.drain()] == [456]
