"""`trapline explain --technique backpatch`: a vfork program under each children policy (US
7,185,320; instrumenter/children/policies.py), with the bytes at the probed site at each step.

samples/bin/ARCH/vfork_probe is probed at work() (trampoline strategy: an int3 at the site) and
run once per policy: follow (the vfork children are traced in the parent's patched space),
detach lazy (the child's first trap backpatches every site, US 7,185,320 FIG. 6-8), detach eager
(backpatched at the pre-fork event, before the child exists) and naive (FIG. 1: the tool waits
only for its traced process, the child stops at a breakpoint for a tracer that never comes while
the parent sleeps in vfork: the kernel reports the deadlock). The timeline is what the debug
interface tells a subscriber (pre_fork with the predicted pid, vfork, vfork_done, exec, exit),
the hits the probe records (with the pid that made them) and the process monitor's reports,
each with the byte at work() then: cc (the int3) or the original. The same inputs give the same
output on every run.
"""
from instrumenter.probes.definitions import Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session

from . import document as d
from .guest import spawn_sample
from ..probespec import parse_probe_spec

POLICIES = (("follow", "lazy"), ("detach", "lazy"), ("detach", "eager"), ("naive", "lazy"))
WHAT = {
    "follow": "every child traced: the vfork children run the parent's patched space and their "
              "hits are recorded with their own pid",
    "detach --backpatch lazy": "children untraced: a vfork child's first trap backpatches every "
                               "site (that hit not recorded), vfork-done re-inserts them",
    "detach --backpatch eager": "children untraced: the pre-fork event backpatches every site "
                                "before the child exists, vfork-done re-inserts them",
    "naive": "US 7,185,320 FIG. 1: the tool waits only for its traced process's events",
}


def explain_backpatch(arch: str = "x86_64") -> dict:
    sections, facts = [], {}
    for n, (children, mode) in enumerate(POLICIES):
        name = children if children != "detach" else f"detach --backpatch {mode}"
        events, result = _run(arch, children, mode)
        sections.append(d.section(f"{n + 1}. --children {name}: {WHAT[name]}",
                                  events + [d.text(result["line"])]))
        facts[name] = {k: v for k, v in result.items() if k != "line"}
    title = (f"{arch}: samples/bin/{arch}/vfork_probe, probe uprobe:vfork_probe:work (trampoline "
             "strategy), under each children policy")
    note = d.section(None, [d.text("t: the instruction clock of the traced processes (an "
                                   "untraced child's own instructions are not counted); site: "
                                   "the byte at work() in the parent's space after the event")])
    return d.document("backpatch", arch, title, [note] + sections, **facts)


def _run(arch: str, children: str, mode: str):
    from kernel_model.kernel import Deadlock
    kernel, proc, stdout = spawn_sample(arch, "vfork_probe", [])
    debug = kernel.debug
    timeline = _Timeline(debug, proc)
    debug.subscribe(timeline)         # before the session: each event, then the tool's answer
    probe = Probe(parse_probe_spec("uprobe:vfork_probe:work"), nargs=0,
                  action=lambda context: timeline.hit(context))
    session = Session(kernel, [probe], buffers=Buffers(drain=lambda r: None),
                      strategy="trampoline", children=children, backpatch=mode)
    report = session.monitor.report

    def reported(text):                       # the monitor's one-line reports, in event order
        report(text)
        timeline.add(debug.current_thread() or debug.threads(proc)[0], f"monitor: {text}")
    session.monitor.report = reported
    session.attach(proc)
    timeline.site = proc.image.symbols.lookup("work").addr
    try:
        status = kernel.run(proc)
        line = f"run: exit status {status >> 8}; {probe.hits} hits recorded"
        result = {"exit_status": status >> 8, "hits": probe.hits, "deadlock": False}
    except Deadlock as stuck:
        first = str(stuck).strip().split("\n")[0]
        line = f"run: DEADLOCK, reported by the kernel: {first}"
        result = {"exit_status": None, "hits": probe.hits, "deadlock": True}
        timeline.add(debug.threads(proc)[0], "the kernel finds nothing can run: the child waits for "
                                      "a tracer, the parent for the child: the naive tool's deadlock")
    lines = stdout.data.decode().strip().split("\n")
    result["line"] = line + (f"; output {len(lines)} lines, the last {lines[-1]!r}"
                             if lines != [""] else "; no output")
    result["pids_hit"] = sorted(set(timeline.pids))
    return timeline.events, result


class _Timeline:
    """The door's process events and the probe's hits, with the byte at work() each time."""

    def __init__(self, debug, proc):
        self.debug, self.proc = debug, proc
        self.site = None
        self.events: list[dict] = []
        self.pids: list[int] = []

    def add(self, thread, what: str) -> None:
        byte = None
        if self.site is not None and self.debug.is_alive(self.proc):
            byte = self.debug.read_memory_raw(self.proc, self.site, 1)
        self.events.append(d.event(self.debug.instruction_count(), thread.tid, what, site=byte))

    def hit(self, context) -> None:
        pid = context.thread.process.pid
        self.pids.append(pid)
        self.add(context.thread, f"hit at work() in pid {pid} (recorded)")

    def pre_fork(self, parent, child_pid, *, vfork) -> None:
        self.add(self.debug.threads(parent)[0], f"pre-fork event: pid {parent.pid} will "
                                    f"{'vfork' if vfork else 'fork'} pid {child_pid} (predicted)")

    def vfork(self, parent, child) -> None:
        self.add(self.debug.threads(child)[0], f"vfork: pid {child.pid} runs in pid {parent.pid}'s space, "
                                   "the parent sleeps")

    def vfork_done(self, parent, child) -> None:
        self.add(self.debug.threads(parent)[0], f"vfork-done: pid {child.pid} exec'd or exited, pid "
                                    f"{parent.pid} resumes")

    def exec(self, process, path, argv) -> None:
        self.add(self.debug.threads(process)[0], f"exec: pid {process.pid} gets a new image (its own "
                                     "space: the site byte shown is still the parent's)")

    def exit(self, process, status) -> None:
        if process is not self.proc:
            self.add(self.debug.threads(process)[0], f"exit: pid {process.pid}")
