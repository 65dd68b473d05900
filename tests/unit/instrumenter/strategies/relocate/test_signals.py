"""instrumenter/strategies/relocate/signals.py: which original address a signal frame shows for
a PC in a relocated copy, and where sigreturn goes on — the same copy, the function's newer
copy at the same point, or the original address once no copy is left."""
import pytest

from instrumenter.strategies.relocate.copy import lay_out_copy
from instrumenter.strategies.relocate.signals import SignalFrames
from instrumenter.strategies.relocate.table import SpaceRelocations

from .test_table import COPY_AT, _fib

STEP = "step"


class _Debug:
    SIGNAL_PC_STEP = STEP


class _Strategy:
    debug = _Debug()

    def __init__(self):
        self.table = SpaceRelocations()

    def tables_of(self, process):
        return self.table


class _Thread:
    process = None


def _setup(arch, probes=None):
    fc = _fib(arch)
    strategy = _Strategy()
    old = lay_out_copy(fc, COPY_AT, arch, probes or {})
    strategy.table.add(old)
    return fc, strategy, old, SignalFrames(strategy)


def _rebuild(fc, strategy, arch, probes):
    """A probe added: the old copy is retired and, once no PC is in it, dropped."""
    old = strategy.table.retire(fc.start)
    new = lay_out_copy(fc, COPY_AT + 0x10000, arch, probes)
    strategy.table.add(new)
    strategy.table.drop(old)
    return new


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_every_exact_point_shows_its_original_and_resumes_in_the_same_copy(arch):
    fc, strategy, copy, frames = _setup(arch)
    thread = _Thread()
    stepped = shown = 0
    for at in range(copy.address, copy.end):
        answer = frames.translate(thread, at)
        piece = copy.piece_at(at)
        if answer == STEP:
            stepped += 1
            assert at not in (piece.start, piece.insn_start, piece.jump_back)
            continue
        original, resume = answer
        shown += 1
        assert fc.contains(original) and original in fc.index or original == piece.next_original
        assert resume(thread) == at
    assert frames.translate(thread, COPY_AT - 1) is None
    assert shown >= len(fc.insns) and stepped >= 1          # call recipes are several insns


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_rebuilt_copy_takes_the_thread_at_the_same_point(arch):
    fc = _fib(arch)
    second = fc.insns[1].address
    fc, strategy, old, frames = _setup(arch, {second: (True, [])})
    thread = _Thread()
    call = fc.calls[0]
    before = old.by_original[second].start
    _, at_piece = frames.translate(thread, before)
    _, at_insn = frames.translate(thread, old.by_original[second].insn_start)
    call_out = next(a for a, (kind, o) in old.callouts.items() if kind == "call" and o == call.address)
    _, at_call = frames.translate(thread, call_out)
    new = _rebuild(fc, strategy, arch, {second: (True, []), fc.start: (True, [])})
    piece = new.by_original[second]
    assert piece.insn_start == piece.start + 1 and piece.start != old.by_original[second].start
    assert at_piece(thread) == piece.start                        # its probe has not fired yet
    assert at_insn(thread) == piece.insn_start                    # it had in the old copy
    assert new.callouts[at_call(thread)] == ("call", call.address)


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_with_no_copy_left_the_original_code_goes_on(arch):
    fc, strategy, old, frames = _setup(arch)
    thread = _Thread()
    second = fc.insns[1].address
    original, resume = frames.translate(thread, old.by_original[second].insn_start)
    strategy.table.retire(fc.start)
    strategy.table.drop(old)
    assert original == second and resume(thread) == second


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_stale_pointer_table_of_a_detach_holds_every_exact_point(arch):
    """instrumenter/tracing/detach_stale.py asks `stale_points`: each point a signal frame may
    show is translated after the copy's pages are gone too, to the same original address."""
    from instrumenter.strategies.relocate.strategy import RelocateProbes
    fc = _fib(arch)
    fc, strategy, copy, frames = _setup(arch, {fc.start: (True, [])})
    points = RelocateProbes.stale_points(strategy, None)
    thread = _Thread()
    shown = {}
    for at in range(copy.address, copy.end):
        answer = frames.translate(thread, at)
        if answer != STEP:
            shown[at] = answer[0]
    assert len(shown) >= len(fc.insns) + len(fc.calls) and points == shown
