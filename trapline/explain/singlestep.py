"""`trapline explain --technique singlestep` and `singlestep-stopall`: the classic scheme of
restoring the original instruction and single-stepping it (instrumenter/strategies/
singlestep.py, US 7,350,196 [0004]-[0006]) and the stop-all scheme that closes its window
(singlestep_stopall.py, [0005]), on samples/bin/ARCH/loss_threads: two threads calling probed()
at a small instruction quantum, so the scheduler switches threads inside a window.

What the strategy does is watched from outside it: its breakpoint and #DB handlers are wrapped
(each call is an event: the hit with the original bytes put back and TF set; the #DB with the
int3 written again), and a code breakpoint at probed() (kernel_model/debug/run.py: a hook before
the instruction, no byte patched) sees every thread that arrives there, with the bytes the site
holds then: an int3 is a hit; the original bytes are the stepping thread's single step, or, for
any other thread, an execution no probe sees — a lost hit, marked. The timeline shown runs from
the start up to the first lost hit's window closing (for stop-all, the same number of windows);
the totals count the whole run: executions at the site, hits, lost. `at` is the instruction
clock as the hook reads it. The same inputs give the same output on every run.
"""
from instrumenter.probes.definitions import Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session

from . import document as d
from .guest import spawn_sample
from ..probespec import parse_probe_spec

THREADS = 2
# (calls per thread, quantum) per arch: where the baseline loses a hit in this sample (a scan
# of 10-40 calls at quanta 1-11: a loss needs a switch inside a window AND the other thread
# arriving at probed() before the #DB, which two threads rarely do)
RUNS = {"i386": (40, 5), "x86_64": (40, 11)}
SHOWN_WINDOWS = 2
INT3 = b"\xcc"


def explain_singlestep(arch: str = "x86_64") -> dict:
    return _explain(arch, "singlestep")


def explain_stopall(arch: str = "x86_64") -> dict:
    return _explain(arch, "singlestep-stopall")


def _explain(arch: str, strategy_name: str) -> dict:
    calls, quantum = RUNS[arch]
    kernel, proc, stdout = spawn_sample(arch, "loss_threads", [str(THREADS), str(calls)],
                                        quantum=quantum)
    debug = kernel.debug
    probe = Probe(parse_probe_spec("uprobe:loss_threads:probed"), nargs=0)
    session = Session(kernel, [probe], buffers=Buffers(drain=lambda records: None),
                      strategy=strategy_name)
    strategy = session.strategies[strategy_name]
    watcher = _Watcher(debug, proc, strategy)
    session.attach(proc)
    site = proc.image.symbols.lookup("probed").addr
    watcher.watch(site)
    status = kernel.run(proc)
    session.flush()
    output = stdout.data.decode().strip()
    executions = watcher.executions
    lost = sum(1 for e in watcher.events if e["lost"])
    shown = watcher.shown()
    original = watcher.original.hex(" ")
    sections = [
        d.section("1. the probe (the strategy's placement)", [
            d.text(f"probed() at {site:#x}: its first instruction `{watcher.first_insn}` "
                   f"({original}) is replaced by int3 (cc)"),
            d.text(f"{THREADS} threads call probed() {calls} times each; the scheduler switches "
                   f"threads every {quantum} instructions while both can run"),
            *_scheme(strategy_name)]),
        d.section("2. the timeline (the bytes at probed() after each event)", shown),
        d.section(None, _totals(strategy_name, executions, probe.hits, lost, strategy,
                                status >> 8, output)),
    ]
    title = (f"{arch}: samples/bin/{arch}/loss_threads {THREADS} {calls} at quantum {quantum}, "
             f"probe uprobe:loss_threads:probed ({strategy_name} strategy)")
    facts = {"exit_status": status >> 8, "output": output, "executions": executions,
             "hits": probe.hits, "lost": lost, "windows": strategy.restores}
    if strategy_name == "singlestep-stopall":
        facts["held_thread_insns"] = strategy.held_thread_insns
    return d.document(strategy_name, arch, title, sections, **facts)


def _scheme(name: str) -> list[dict]:
    steps = ["on a hit: the probe's hooks run, the ORIGINAL bytes go back at the site (the "
             "window opens), TF is set in the saved flags, IRET returns to the site itself",
             "the CPU runs the original instruction, then raises #DB (a trap: SDM Vol. 3A "
             "17.3.1.4); the #DB handler writes the int3 back (the window closes) and clears TF"]
    if name == "singlestep":
        steps.append("between the two the site holds the original instruction for every "
                     "thread: one switched in then runs it and no probe sees it")
    else:
        steps.insert(0, "on a hit, first every other thread of the address space is held "
                        "(the door's suspend_thread) and signals to the stepping thread wait; "
                        "after the #DB they are released: nobody else runs in the window")
    return [d.text(f"{chr(ord('a') + i)}) {s}") for i, s in enumerate(steps)]


def _totals(name, executions, hits, lost, strategy, status, output) -> list[dict]:
    out = [d.text(f"run: exit status {status}, output {output!r} (every call made)"),
           d.text(f"probed() ran {executions} times; the probe saw {hits}; lost: {lost} "
                  f"({strategy.restores} windows opened)")]
    if name == "singlestep-stopall":
        out.append(d.text(f"the price: {strategy.held_thread_insns} thread-instructions held "
                          "(for each window, its length times the threads held)"))
    return out


class _Watcher:
    """The events of the run: the strategy's two handlers, wrapped, and a code breakpoint at
    the site that sees every thread arriving there."""

    def __init__(self, debug, proc, strategy):
        self.debug, self.proc, self.strategy = debug, proc, strategy
        self.events: list[dict] = []
        self.executions = 0
        self.site = None
        self.original = b""
        self.first_insn = ""
        on_hit, on_debug_trap = strategy._on_hit, strategy._on_debug_trap

        def hit(site, frame, thread):          # wraps SingleStepProbes._on_hit (a #BP)
            held = [t.tid for t in debug.space_threads(thread.process) if t is not thread]
            claimed = on_hit(site, frame, thread)
            what = "#BP: the probe's hooks ran; original bytes put back (window opens), TF set"
            if hasattr(strategy, "holds"):
                what = f"#BP: tid {', '.join(map(str, held))} held; " + what[5:]
            self._event(thread, what)
            return claimed

        def debug_trap(frame, thread):         # wraps _on_debug_trap (the #DB after the step)
            claimed = on_debug_trap(frame, thread)
            if claimed is not None:
                what = "#DB: the original instruction ran; int3 written back (window closes), TF cleared"
                if hasattr(strategy, "holds"):
                    what += "; the others released"
                self._event(thread, what)
            return claimed
        strategy._on_hit, strategy._on_debug_trap = hit, debug_trap   # before place() binds them

    def watch(self, site: int) -> None:
        from instrumenter.insn.decode import decode
        self.site = site
        self.original = self.debug.read_memory(self.proc, site, 16)
        insn = decode(self.original, site, self.debug.arch(self.proc).name)
        self.original, self.first_insn = insn.raw, f"{insn.mnemonic} {insn.op_str}".strip()
        self.debug.add_code_breakpoint(self.proc.space, site, self._arrives)

    def _arrives(self, thread, address: int) -> bool:
        now = self.debug.read_memory_raw(thread.process, address, 1)
        stepping = thread.tid in self.strategy.stepping
        if now == INT3:
            self._event(thread, "arrives at probed(): runs the int3")
        elif stepping:
            self.executions += 1
            self._event(thread, "single-steps the original instruction (TF set)")
        else:
            self.executions += 1
            self._event(thread, "arrives at probed() inside another thread's window: runs the "
                                "original instruction", lost=True)
        return False

    def _event(self, thread, what: str, *, lost: bool = False) -> None:
        self.events.append(d.event(self.debug.instructions_retired(thread.process), thread.tid,
                                   what, site=self.debug.read_memory_raw(thread.process, self.site,
                                                                         len(self.original)),
                                   lost=lost))

    def shown(self) -> list[dict]:
        """The first SHOWN_WINDOWS windows, then the window of the first lost hit (stop-all,
        which loses none: the first window that holds the other worker too), with the
        windows between counted."""
        closes = [n for n, e in enumerate(self.events) if e["what"].startswith("#DB")]
        if len(closes) <= SHOWN_WINDOWS:
            return self.events
        head = self.events[:closes[SHOWN_WINDOWS - 1] + 1]
        first_lost = next((n for n, e in enumerate(self.events) if e["lost"]), None)
        if first_lost is None:          # stop-all: a window with both workers alive instead
            both = [n for n, e in enumerate(self.events)
                    if e["what"].startswith("#BP: tid") and "," in e["what"].split(" held")[0]]
            if not both or both[0] < len(head):
                return head + [d.text(f"... {len(closes) - SHOWN_WINDOWS} more windows: no "
                                      "other thread ran the original instruction in any")]
            first_lost = both[0] + 1
        opened = max(n for n in range(first_lost) if self.events[n]["what"].startswith("#BP"))
        closed = next(n for n in closes if n >= first_lost)
        skipped = sum(1 for n in closes if len(head) <= n < opened)
        middle = [d.text(f"... {skipped} windows later:")] if skipped else []
        return head + middle + self.events[opened - 1:closed + 1]
