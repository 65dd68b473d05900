"""The profiler's unwinder against the program's own account of its stack (issue 18).

samples/callchain.c keeps a shadow stack: each tracked function pushes its address at entry and
pops it before returning. At a timer tick after any number of instructions (hypothesis picks
the interval and the work), the tracked functions on the unwound stack, outermost first, are
exactly the shadow stack — the frames suspended in a call are always pushed; only the innermost
function may be between its entry and its push, or its pop and its return. Built with frame
pointers (callchain) and without (callchain_nofp, unwound by .eh_frame CFI alone), both arches.
A stack the unwinder gives up on is allowed only where the program runs libc code without CFI
(musl's assembly), never in the sample's own functions.
samples/sigchain.c keeps the same shadow stack through signal handlers (issue 26): a tick in a
handler, in musl's restorer or in raise under it unwinds through the signal frame to main, and
the tracked functions on both sides of it are the shadow stack; i386's plain handler has the
non-rt sigframe, the SA_SIGINFO one the rt_sigframe.
"""
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from instrumenter.profiler.sampler import walk_registers
from instrumenter.profiler.unwind import Unwinder
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "bin"
TRACKED = ("leaf", "inner", "middle", "outer", "spiral", "on_usr1", "on_usr2")
MIN_ACCEPTED = 20                 # examples with at least one tick inside the tracked code


class ShadowCheck:
    """A tool on the debug interface: at every tick, unwind and read the shadow stack."""

    def __init__(self, kernel, process):
        self.door, self.process = kernel.debug, process
        symbols = process.image.symbols
        self.tracked = {symbols.lookup(name).addr: name for name in TRACKED if symbols.lookup(name)}
        self.functions = symbols
        self.depth_at = symbols.lookup("shadow_depth").addr
        self.stack_at = symbols.lookup("shadow_stack").addr
        self.word = 4 if process.image.bits == 32 else 8
        self.unwinder = Unwinder(kernel.debug)
        self.compared = self.in_libc_truncated = self.through_signals = 0

    def timer_tick(self, thread, frame):
        stack = self.unwinder.unwind(self.process, walk_registers(self.door, self.process, frame))
        names = [self._function(pc, i) for i, pc in enumerate(stack.frames)]
        self.through_signals += any(name in ("on_usr1", "on_usr2") for name in names) \
            and not stack.truncated and "main" in names
        if stack.truncated:
            assert names[0] not in TRACKED and names[0] != "main", (names, stack.truncated)
            self.in_libc_truncated += 1
            return
        depth = int.from_bytes(self.door.read_memory(self.process, self.depth_at, 4), "little")
        raw = self.door.read_memory(self.process, self.stack_at, depth * self.word)
        shadow = [self.tracked[int.from_bytes(raw[i:i + self.word], "little")]
                  for i in range(0, len(raw), self.word)]
        unwound = [name for name in reversed(names) if name in TRACKED]
        if names[0] in TRACKED:               # innermost: maybe before its push / after its pop
            assert shadow in (unwound, unwound[:-1]), (shadow, names)
        else:
            assert shadow == unwound, (shadow, names)
        self.compared += bool(unwound)

    def _function(self, pc: int, index: int) -> str | None:
        symbol = self.functions.function_at(pc - (index > 0))
        return symbol.name if symbol is not None else None


def _run(arch: str, program: str, interval: int, rounds: int) -> ShadowCheck:
    out = CapturedOutput(name=b"out")
    kernel = Kernel(KernelConfig(stdout=out, stderr=out))
    process = kernel.spawn(str(SAMPLES / arch / program).encode(), [program.encode(), str(rounds).encode()], [])
    check = ShadowCheck(kernel, process)
    kernel.debug.subscribe(check)
    kernel.debug.arm_timer(interval)
    assert kernel.run(process) == 0 and out.data.startswith(program.split("_")[0].encode() + b"(")
    return check


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@pytest.mark.parametrize("program", ["callchain", "callchain_nofp", "sigchain"])
def test_the_unwound_stack_is_the_programs_shadow_stack(arch, program):
    accepted, through_signals = [], []

    @settings(max_examples=max(settings().max_examples, MIN_ACCEPTED + 10))
    @given(interval=st.integers(min_value=97, max_value=4_001), rounds=st.integers(min_value=1, max_value=6))
    def check(interval, rounds):
        result = _run(arch, program, interval, rounds)
        if result.compared:
            accepted.append(result.compared)
        through_signals.append(result.through_signals)

    check()
    assert len(accepted) >= MIN_ACCEPTED, accepted
    if program == "sigchain":       # ticks inside the handlers were taken and compared
        assert sum(1 for n in through_signals if n) >= MIN_ACCEPTED, through_signals
