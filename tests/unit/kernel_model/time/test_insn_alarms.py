"""Instruction alarms (kernel_model/time/insn_alarms.py, debug/alarms.py): a tool's callback runs
with the run's instruction clock exactly at the count it asked for, outside every hook, in
count then addition order; an alarm asked for inside a hook runs at the next safe point."""
import io
from pathlib import Path

from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig

ROOT = Path(__file__).resolve().parents[4]


def _kernel(arch: str, program: str = "fib", *args: bytes, quantum: int = 200_000):
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=CapturedOutput(),
                                 stderr=CapturedOutput(), report=io.StringIO(), quantum=quantum))
    path = str(ROOT / "samples" / "bin" / arch / program).encode()
    proc = kernel.spawn(path, [path, *args], [])
    kernel.debug.count_instructions(proc)
    return kernel, proc


def test_alarms_fire_at_their_exact_count_in_order(arch):
    kernel, proc = _kernel(arch, "fib", b"10")
    debug, seen = kernel.debug, []
    for count, tag in ((5000, "b"), (1234, "a"), (5000, "c"), (1, "first")):
        debug.at_instruction(count, lambda tag=tag: seen.append(
            (tag, debug.instruction_count(), kernel.in_hook)))
    kernel.run(proc)
    assert seen == [("first", 1, False), ("a", 1234, False), ("b", 5000, False),
                    ("c", 5000, False)]
    assert kernel.config.stdout.data.endswith(b"= 55\n")        # the run is not disturbed


def test_an_alarm_does_not_change_what_the_guest_computes_or_its_slices(arch):
    """Threads at quantum 7: cutting a slice at an alarm is no preemption."""
    plain, proc = _kernel(arch, "loss_threads", b"3", b"20", quantum=7)
    plain.run(proc)
    alarmed, proc2 = _kernel(arch, "loss_threads", b"3", b"20", quantum=7)
    for count in range(100, 4000, 333):
        alarmed.debug.at_instruction(count, lambda: None)
    alarmed.run(proc2)
    assert alarmed.config.stdout.data == plain.config.stdout.data == b"threads=3 calls=60\n"


def test_an_alarm_asked_for_inside_a_hook_runs_at_the_next_safe_point(arch):
    kernel, proc = _kernel(arch, "fib", b"10")
    debug, seen = kernel.debug, []

    class Watcher:
        def syscall_entry(self, thread, name, args):
            if not seen:
                seen.append(("asked", debug.instruction_count(), kernel.in_hook))
                debug.at_safe_point(lambda: seen.append(
                    ("ran", debug.instruction_count(), kernel.in_hook)))

        def syscall_exit(self, thread, name, args, result):
            pass

    debug.syscall_watchers.append(Watcher())
    kernel.run(proc)
    (_, asked, in_hook), (_, ran, ran_in_hook) = seen
    assert in_hook and not ran_in_hook and ran - asked <= 1    # the syscall insn's own count


def test_code_in_use_includes_the_pcs_pending_signal_frames_return_to(arch):
    """Inside a handler, the interrupted PC sigreturn will resume at is in use too (a tool
    must not reuse out-of-line code there): kernel_model/debug/alarms.py."""
    kernel, proc = _kernel(arch, "signals")
    debug, seen = kernel.debug, []

    class Watcher:
        def signal(self, process, thread, signal, info):
            if thread is not None and not seen:
                seen.append((debug.code_addresses_in_use(process),
                             debug.read_register(thread, debug.arch(process).pc)))

    debug.subscribe(Watcher())
    kernel.run(proc)
    (in_use, handler_pc), = seen
    assert in_use[0] == handler_pc and len(in_use) == 2           # live PC, then the frame's
    assert debug.symbolize(proc, in_use[1]) != debug.symbolize(proc, handler_pc)
