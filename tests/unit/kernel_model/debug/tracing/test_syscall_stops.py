"""The tracing facility's system-call stops (kernel_model/debug/tracing/syscall_stops.py; ttrace's
TTEVT_SYSCALL_ENTRY/RETURN, ptrace's syscall-enter/exit-stop) on whole guest runs, both arches:
every call stops at its entry and its return, in the order the calls are made (checked against
a plain syscall watcher); a tracer changing the registers at an entry stop changes the call;
a thread kept stopped at an entry does not run its call until it is resumed, then runs it once
and stops at its return."""
import io
from pathlib import Path

from kernel_model.debug import TraceEvent, TraceOption
from kernel_model.errno import EBADF
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig

ROOT = Path(__file__).resolve().parents[5]
EXPECTED = ROOT / "samples" / "expected"
SYSCALLS = TraceEvent.SYSCALL_ENTRY | TraceEvent.SYSCALL_EXIT


def _kernel(arch: str, sample: str, *args: str):
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=CapturedOutput(),
                                 stderr=CapturedOutput(), report=io.StringIO()))
    path = str(ROOT / "samples" / "bin" / arch / sample).encode()
    return kernel, kernel.spawn(path, [path, *(a.encode() for a in args)], [])


def _untraced_stdout(arch: str, sample: str) -> bytes:
    kernel, proc = _kernel(arch, sample)
    assert kernel.run(proc) == 0
    return kernel.config.stdout.data


class Calls:
    """A plain watcher: the calls as the dispatcher reports them (the ground truth)."""

    def __init__(self):
        self.names = []

    def syscall_entry(self, thread, name, args):
        self.names.append(name)

    def syscall_exit(self, thread, name, args, result):
        pass


class Tracer:
    def __init__(self, debug, on_entry=None, keep=lambda stop: False):
        self.debug, self.on_entry, self.keep = debug, on_entry, keep
        self.log, self.kept = [], []

    def trace_stop(self, stop):
        self.log.append((stop.event, stop.syscall, stop.result))
        assert self.debug.trace_stop_of(stop.thread) is stop
        if stop.event == "syscall-entry" and self.on_entry is not None:
            self.on_entry(stop)
        if self.keep(stop):
            self.kept.append(stop)
        else:
            self.debug.resume(stop.thread)


def test_every_call_stops_at_its_entry_and_its_return(arch):
    kernel, proc = _kernel(arch, "hello")
    calls = Calls()
    kernel.debug.syscall_watchers.append(calls)
    tracer = Tracer(kernel.debug)
    kernel.debug.attach(proc, tracer, SYSCALLS)
    assert kernel.run(proc) == 0
    assert kernel.config.stdout.data == _untraced_stdout(arch, "hello")
    entries = [name for event, name, _ in tracer.log if event == "syscall-entry"]
    assert entries == calls.names and len(entries) >= 3 and entries[-1] == "exit_group"
    expected = []
    for name in calls.names[:-1]:                       # exit_group: no return
        expected += [("syscall-entry", name), ("syscall-exit", name)]
    assert [(event, name) for event, name, _ in tracer.log[:-1]] == expected
    writes = [result for event, name, result in tracer.log
              if event == "syscall-exit" and name in ("write", "writev")]
    assert sum(writes) == len(kernel.config.stdout.data)


def test_registers_changed_at_an_entry_stop_are_the_calls_registers(arch):
    """ptrace's use: at the entry of each call writing the greeting, the tracer points its
    descriptor (the first argument register) at one that is not open: nothing is written, and
    each return stop shows EBADF."""
    kernel, proc = _kernel(arch, "hello")
    first = "ebx" if arch == "i386" else "rdi"

    def misdirect(stop):
        if stop.syscall in ("write", "writev"):
            kernel.debug.cpu(stop.thread.process).set_register(first, 99)
    tracer = Tracer(kernel.debug, on_entry=misdirect)
    kernel.debug.attach(proc, tracer, SYSCALLS)
    kernel.run(proc)
    assert _untraced_stdout(arch, "hello") and kernel.config.stdout.data == b""
    entered = [i for i, (event, name, _) in enumerate(tracer.log)
               if event == "syscall-entry" and name in ("write", "writev")]
    assert entered and all(tracer.log[i + 1] == ("syscall-exit", tracer.log[i][1], -EBADF)
                           for i in entered)


def test_a_thread_kept_at_an_entry_stop_runs_its_call_only_when_resumed(arch):
    """The parent of fork_probe is kept at the entry of its wait4 while the untraced child
    runs to its end; at the child's exit the parent is still there, its call not run (no
    return stop yet); resumed, the call runs once (entered once) and returns the child."""
    kernel, proc = _kernel(arch, "fork_probe")
    debug = kernel.debug
    tracer = Tracer(debug, keep=lambda stop: stop.syscall == "wait4" and not tracer.kept)
    seen_at_child_exit = []

    class ChildExit:
        def exit(self, process, status):
            if process.pid == proc.pid or not tracer.kept:
                return
            stop = tracer.kept[0]
            seen_at_child_exit.append((list(tracer.log), debug.trace_stop_of(stop.thread)))
            debug.resume(stop.thread)
    debug.subscribe(ChildExit(), events=("exit",))
    debug.attach(proc, tracer, SYSCALLS)
    assert kernel.run(proc) == 0
    assert kernel.config.stdout.data == (EXPECTED / "fork_probe.out").read_bytes()
    [(log_then, stop_then)] = seen_at_child_exit
    assert stop_then is tracer.kept[0] and log_then[-1] == ("syscall-entry", "wait4", None)
    after = tracer.log[len(log_then):]
    assert after[0][:2] == ("syscall-exit", "wait4") and after[0][2] > proc.pid   # the child's pid
    assert [entry for entry in tracer.log if entry == ("syscall-entry", "wait4", None)] == \
        [("syscall-entry", "wait4", None)]                                         # entered once


def test_the_exit_event_stops_the_thread_before_its_process_goes(arch):
    """TTEVT_EXIT / PTRACE_EVENT_EXIT: fork_probe's child (traced with the parent's EXIT flag
    by INHERIT) and then the parent stop at their exit_group, with statuses 9 and 0 and their
    stacks still readable; resumed, each exits, and the tracer hears of both exits after."""
    kernel, proc = _kernel(arch, "fork_probe")
    debug = kernel.debug
    seen = []

    class ExitTracer:
        def trace_stop(self, stop):
            process = stop.thread.process
            word = debug.read_memory(process, debug.cpu(process).sp, 4)
            seen.append((stop.event, stop.pid, stop.result, len(word), debug.trace_stop_of(stop.thread)))
            debug.resume(stop.thread)

        def trace_exit(self, pid, status):
            seen.append(("exited", pid, status))
    debug.attach(proc, ExitTracer(), TraceEvent.EXIT, TraceOption.INHERIT)
    debug.set_event_mask(proc, TraceEvent.EXIT | TraceEvent.FORK, TraceOption.INHERIT)
    assert kernel.run(proc) == 0
    assert kernel.config.stdout.data == (EXPECTED / "fork_probe.out").read_bytes()
    stops = [entry for entry in seen if entry[0] != "fork"]
    assert [entry[:4] for entry in stops] == [("exit", 101, 9, 4), ("exited", 101, 9 << 8),
                                              ("exit", 100, 0, 4), ("exited", 100, 0)]
    assert all(entry[4].event == "exit" for entry in stops if entry[0] == "exit")


def test_with_syscall_entry_too_the_exit_call_stops_at_its_entry_then_at_its_exit(arch):
    """ptrace's order for exit_group under PTRACE_O_TRACEEXIT and PTRACE_SYSCALL: the
    syscall-enter-stop, then, resumed, the PTRACE_EVENT_EXIT stop; then the process goes."""
    kernel, proc = _kernel(arch, "fib", "10")
    tracer = Tracer(kernel.debug)
    kernel.debug.attach(proc, tracer, TraceEvent.SYSCALL_ENTRY | TraceEvent.EXIT)
    assert kernel.run(proc) == 0
    assert tracer.log[-2:] == [("syscall-entry", "exit_group", None), ("exit", "exit_group", 0)]
    assert [entry[0] for entry in tracer.log].count("exit") == 1


def test_a_tracer_that_turns_exit_into_another_call_gets_no_exit_stop(arch):
    """At exit_group's entry stop the tracer makes the call getpid (-ENOSYS style rewrites
    are how strace -e inject works): no exit stop for it; the program's own exit still has."""
    kernel, proc = _kernel(arch, "fib", "10")
    changed = []

    def rewrite(stop):
        if stop.syscall == "exit_group" and not changed:
            cpu = kernel.debug.cpu(stop.thread.process)
            number = {"i386": 20, "x86_64": 39}[arch]          # getpid
            cpu.set_register("eax" if arch == "i386" else "rax", number)
            changed.append(stop)
    tracer = Tracer(kernel.debug, on_entry=rewrite)
    kernel.debug.attach(proc, tracer, TraceEvent.SYSCALL_ENTRY | TraceEvent.EXIT)
    assert kernel.run(proc) == 0
    first = tracer.log.index(("syscall-entry", "exit_group", None))
    assert changed and tracer.log[first + 1][0] != "exit"
    # musl's _Exit goes on to exit(2) after exit_group: that one stops at entry, then exit
    assert tracer.log[-2:] == [("syscall-entry", "exit", None), ("exit", "exit", 0)]


class DeathTracer:
    def __init__(self, debug):
        self.debug, self.log = debug, []

    def trace_stop(self, stop):
        self.log.append((stop.event, stop.signal, stop.result))
        self.debug.resume(stop.thread, stop.signal if stop.event == "signal" else None)

    def trace_exit(self, pid, status):
        self.log.append(("exited", pid, status))


def test_a_death_by_signal_stops_at_exit_first(arch):
    """PTRACE_EVENT_EXIT comes for a signal death too: SIGTERM (default: terminate) stops the
    thread with the wait status 15, its memory still readable; resumed, the process dies of
    it. With SIGNAL in the mask, the signal stop comes first and only once."""
    from kernel_model.signals import SIGTERM
    for events, expected in ((TraceEvent.EXIT, [("exit", SIGTERM, SIGTERM)]),
                             (TraceEvent.EXIT | TraceEvent.SIGNAL,
                              [("signal", SIGTERM, None), ("exit", SIGTERM, SIGTERM)])):
        kernel, proc = _kernel(arch, "fib", "20")
        tracer = DeathTracer(kernel.debug)
        kernel.debug.attach(proc, tracer, events)
        kernel.signals.post(proc, SIGTERM)
        assert kernel.run(proc) == SIGTERM
        assert tracer.log == expected + [("exited", proc.pid, SIGTERM)]


def test_a_core_dumping_death_reports_the_core_bit_and_sigkill_never_stops(arch):
    from kernel_model.signals import SIGKILL, SIGQUIT
    kernel, proc = _kernel(arch, "fib", "20")
    tracer = DeathTracer(kernel.debug)
    kernel.debug.attach(proc, tracer, TraceEvent.EXIT)
    kernel.signals.post(proc, SIGQUIT)
    assert kernel.run(proc) == SIGQUIT | 0x80
    assert tracer.log == [("exit", SIGQUIT, SIGQUIT | 0x80), ("exited", proc.pid, SIGQUIT | 0x80)]
    kernel, proc = _kernel(arch, "fib", "20")
    tracer = DeathTracer(kernel.debug)
    kernel.debug.attach(proc, tracer, TraceEvent.EXIT | TraceEvent.SIGNAL)
    kernel.signals.post(proc, SIGKILL)
    assert kernel.run(proc) == SIGKILL
    assert tracer.log == [("exited", proc.pid, SIGKILL)]
