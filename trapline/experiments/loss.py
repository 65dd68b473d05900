"""The probe-loss experiment (US 7,350,196, [0004]-[0006] and [0046]): does a strategy see every hit
when several threads, or several processes sharing the code, run through the probed instruction?

Two guests, WORKERS workers each calling `probed()` CALLS times without locks, so all of them
stay runnable and the scheduler's instruction quantum interleaves them as finely as it is set:
samples/loss_threads (pthreads) and samples/loss_procs (processes made with clone(CLONE_VM),
neither fork nor vfork: each has its own pid and shares the parent's memory, probes included).
A uprobe on `probed` must count WORKERS * CALLS hits. Strategies that never take the patch out
(emulate, trampoline, jump) lose nothing; singlestep restores the original instruction while it
steps, and whenever a quantum ends inside that window another worker runs the original
unobserved. singlestep-stopall (US 7,350,196 [0005]) steps the same way but holds every other
thread of the address space for the window: it loses nothing, and what it costs is the "held"
column, the thread-instructions during which other threads were held (for each window, the
guest instructions that ran in it times the threads held).

The quantum ends at its very instruction (the kernel's exact_quantum, process/sched.py), not at
the block boundary after it as in other runs: a window is a few instructions, and where a
preemption falls inside one is what the experiment measures.
Every column but the wall time is a function of the inputs (binary, arguments, quantum, seed,
strategy): the kernel's scheduler is deterministic. Guest instructions are counted the way
--max-insns charges them: whole quantum slices while several threads are runnable.
"""
import os
import time
from dataclasses import dataclass

from emu.host_stop import StopRequested
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig, wait_status_exit_code

from instrumenter.errors import InstrumenterError
from instrumenter.probes.definitions import UPROBE, Probe, ProbeSpec
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session
from instrumenter.strategies.registry import NAMES as STRATEGY_NAMES

TARGET = "probed"
STRATEGY_ORDER = ("emulate", "emulate-lock", "trampoline", "jump", "relocate", "singlestep",
                  "singlestep-stopall")                                             # table order
assert set(STRATEGY_ORDER) == set(STRATEGY_NAMES), "the experiment covers every registered strategy"
# guest kind -> (sample binary, the word its output line starts with)
GUESTS = {"threads": ("loss_threads", "threads"), "processes": ("loss_procs", "processes")}


@dataclass(frozen=True)
class LossRow:
    arch: str
    guest: str              # "threads" or "processes" (GUESTS)
    strategy: str
    workers: int
    quantum: int
    expected: int
    recorded: int
    insns: int              # instructions charged to quantum slices (--max-insns accounting)
    exit_code: int
    wall: float             # seconds on the host: NOT deterministic, never compared
    held: int = 0           # thread-instructions other threads were held (singlestep-stopall)

    @property
    def lost(self) -> int:
        return self.expected - self.recorded

    def deterministic(self) -> tuple:
        return (self.arch, self.guest, self.strategy, self.workers, self.quantum, self.expected,
                self.recorded, self.insns, self.exit_code, self.held)


def guest_binary(binary_dir: str, arch: str, guest: str) -> str:
    if guest not in GUESTS:
        raise InstrumenterError(f"unknown guest {guest!r} (have: {', '.join(GUESTS)})")
    return os.path.join(binary_dir, arch, GUESTS[guest][0])


def run_once(binary: str, arch: str, strategy: str, workers: int, quantum: int, calls: int,
             *, guest: str = "threads", seed: int = 0) -> LossRow:
    """One run of the guest (loss_threads or loss_procs) WORKERS CALLS with a uprobe on
    probed() placed by `strategy`."""
    stdout, stderr = CapturedOutput(name=b"pipe:[1]"), CapturedOutput(name=b"pipe:[2]")
    config = KernelConfig(seed=seed, cwd=b"/", stdin=CapturedOutput(b""), stdout=stdout,
                          stderr=stderr, quantum=quantum, exact_quantum=True, report=_Discard())
    kernel = Kernel(config)
    binary = os.path.abspath(binary)          # no rootfs: the guest sees the host's tree
    name = os.path.basename(binary)
    argv = [binary.encode(), str(workers).encode(), str(calls).encode()]
    proc = kernel.spawn(binary.encode(), argv, [b"PATH=/bin", b"LANG=C"])
    probe = Probe(ProbeSpec(f"uprobe:{name}:{TARGET}", UPROBE, binary=name, function=TARGET),
                  nargs=0)
    # Only the count matters here: records are drained as they come and not kept.
    session = Session(kernel, [probe], buffers=Buffers(capacity=1024, drain=_ignore),
                      strategy=strategy)
    session.attach(proc)
    started = time.perf_counter()
    status = kernel.run(proc)
    wall = time.perf_counter() - started
    expected = workers * calls
    if stdout.data != f"{GUESTS[guest][1]}={workers} calls={expected}\n".encode():
        raise InstrumenterError(f"{strategy}: the guest's output changed under the probe: "
                                f"{stdout.data!r} {stderr.data!r}")
    held = getattr(session.strategies[strategy], "held_thread_insns", 0)
    return LossRow(arch, guest, strategy, workers, quantum, expected, probe.hits,
                   kernel.insns_used, wait_status_exit_code(status), wall, held)


def run_experiment(binary_dir: str, arches, guests, strategies, workers_list, quanta,
                   calls: int, *, seed: int = 0, progress=None) -> list[LossRow]:
    """Every (arch, guest, strategy, workers, quantum) combination, in that nesting order;
    `progress(done, total, row)` is called after each run. A host signal (emu/host_stop.py)
    ends it with the rows of the runs that finished."""
    grid = [(arch, guest, strategy, workers, quantum) for arch in arches for guest in guests
            for strategy in strategies for workers in workers_list for quantum in quanta]
    rows = []
    for arch, guest, strategy, workers, quantum in grid:
        try:
            rows.append(run_once(guest_binary(binary_dir, arch, guest), arch, strategy, workers,
                                 quantum, calls, guest=guest, seed=seed))
        except StopRequested:           # Ctrl-C: the table of the runs that finished
            break
        if progress is not None:
            progress(len(rows), len(grid), rows[-1])
    return rows


def available_strategies(wanted=None) -> list[str]:
    """The experiment's strategies that the registry has (instrumenter/strategies/registry.py)."""
    names = wanted or STRATEGY_ORDER
    return [s for s in names if s in STRATEGY_NAMES]


def _ignore(records) -> None:
    pass


HEADER = ("arch", "guest", "strategy", "workers", "quantum", "expected", "recorded", "lost",
          "guest insns", "held", "wall s")


def format_table(rows: list[LossRow]) -> str:
    """A fixed-width table; the wall-time column is last and the only host-dependent one."""
    cells = [HEADER] + [(r.arch, r.guest, r.strategy, str(r.workers), str(r.quantum),
                         str(r.expected), str(r.recorded), str(r.lost),
                         str(r.insns) if r.insns else "n/a", str(r.held), f"{r.wall:.2f}")
                        for r in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(HEADER))]
    lines = ["  ".join(c.rjust(w) if i >= 3 else c.ljust(w) for i, (c, w) in
                       enumerate(zip(row, widths))).rstrip() for row in cells]
    return "\n".join(lines[:1] + ["-" * len(lines[0])] + lines[1:])


class _Discard:
    """Where the kernel's own messages go during the experiment (none are expected)."""

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass
