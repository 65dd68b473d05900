"""kernel_model/syscalls/dispatch.py, step by step with stand-ins for the kernel: what a number
resolves to (Call), decode (the argument registers), run (the implementation's errors become
-errno, a pipe without reader also SIGPIPE, a call that must sleep is rewound to run again),
finish (the result stored, the thread's restart state and temporary mask dropped)."""
from types import SimpleNamespace

import pytest

from kernel_model import errno as E
from kernel_model.blocking import WouldBlock
from kernel_model.errno import GuestErrno
from kernel_model.fs.pipe import BrokenPipe
from kernel_model.process.proc import RUNNABLE, SLEEPING
from kernel_model.signals import SIGPIPE
from kernel_model.syscalls.dispatch import BLOCKED, Call, Convention, SyscallDispatcher
from kernel_model.syscalls.registry import NO_RETURN, declaration
from kernel_model.time.clock import VirtualClock


class FakeKernel:
    def __init__(self):
        self.posted, self.blocked, self.unimplemented = [], [], []
        self.signals = SimpleNamespace(post=lambda proc, sig, thread, info=None:
                                       self.posted.append((proc, sig, thread, info)))
        self.clock = VirtualClock()           # handle ticks it (one virtual microsecond a call)
        self.debug = SimpleNamespace(syscall_watchers=[])
        self.scheduler = SimpleNamespace(preempting=None)    # a woken thread to run next
        self.current = None

    def block(self, thread, blocked, name):
        self.blocked.append((thread, blocked.reason, name))

    def report_unimplemented(self, proc, name, nr):
        self.unimplemented.append((name, nr))

    def may_continue(self, thread):
        return "asked the kernel"


def _thread(**state):
    fields = dict(restart={}, blocked_call=None, saved_sigmask=None, sigmask=0,
                  pending_signals=0, state=RUNNABLE, tid=100)
    thread = SimpleNamespace(**{**fields, **state})
    thread.process = SimpleNamespace(pid=100, pending_signals=0)
    return thread


def _ctx(thread, frame=None, mask=0xFFFFFFFF):
    return SimpleNamespace(thread=thread, proc=thread.process, frame=frame, mask=mask)


# ---- what a number means ------------------------------------------------------------------
def test_a_known_number_resolves_to_its_implementation_and_its_properties():
    exit_group, execve, sigsuspend = Call(252, "exit_group"), Call(11, "execve"), Call(179, "rt_sigsuspend")
    assert exit_group.fn is declaration("exit_group").fn and exit_group.ends_thread
    assert execve.outside_hook and not execve.ends_thread       # replaces the image: outside emu_start
    assert sigsuspend.keeps_saved_mask and not Call(20, "getpid").keeps_saved_mask
    assert Call(20, "getpid").nargs == 0 and Call(3, "read").nargs == 3


def test_an_unknown_number_is_enosys_with_strace_s_name_and_reported():
    call = Call(0x1b3, None)
    assert (call.name, call.nargs) == ("syscall_0x1b3", 6)
    kernel = FakeKernel()
    ctx = SimpleNamespace(kernel=kernel, proc="proc")
    assert call.fn(ctx, 1, 2, 3, 4, 5, 6) == -E.ENOSYS
    assert kernel.unimplemented == [("syscall_0x1b3", 0x1b3)]


def test_each_abi_has_its_own_table_and_word():
    i386, x86_64 = Convention("i386"), Convention("x86_64")
    assert (i386.bits, x86_64.bits) == (32, 64)
    assert i386.call(4).name == x86_64.call(1).name == "write"


def test_a_number_is_resolved_on_first_use_and_kept_unless_unknown():
    convention = Convention("x86_64")
    assert convention.calls == {}
    write = convention.call(1)
    assert convention.calls == {1: write} and write.fn is declaration("write").fn
    assert convention.call(0x3ff).name == "syscall_0x3ff" and 0x3ff not in convention.calls


# ---- decode -------------------------------------------------------------------------------
def test_decode_reads_what_the_call_takes_and_all_six_for_watchers():
    dispatcher = SyscallDispatcher(FakeKernel())
    convention = dispatcher.conventions["i386"]
    fetch = tuple((lambda n=n: tuple(range(0x1_0000_0001, 0x1_0000_0001 + n))) for n in range(7))
    read = convention.call(3)
    assert dispatcher._decode(convention, read, fetch, False, []) == (0x100000001, 0x100000002, 0x100000003)
    # int 0x80 from 64-bit code sees the low halves; watched, all six as a list
    assert dispatcher._decode(convention, read, fetch, True, ["watcher"]) == [1, 2, 3, 4, 5, 6]


# ---- run ----------------------------------------------------------------------------------
def _call_raising(exc):
    def fn(ctx, *args):
        raise exc
    call = Call(3, "read")
    call.fn = fn
    return call


def test_run_turns_a_guest_errno_into_its_negative_value():
    dispatcher = SyscallDispatcher(FakeKernel())
    assert dispatcher._run(_ctx(_thread()), _call_raising(GuestErrno(E.EBADF)), ()) == -E.EBADF
    assert dispatcher._busy is False


def test_run_sends_sigpipe_to_a_writer_without_reader():
    kernel = FakeKernel()
    thread = _thread()
    thread.process.creds = SimpleNamespace(uid=555)
    result = SyscallDispatcher(kernel)._run(_ctx(thread), _call_raising(BrokenPipe(b"pipe:[1]")), ())
    assert result == -E.EPIPE
    # send_sig(SIGPIPE, current, 0): si_code SI_USER (0), si_pid and si_uid the writer's own
    assert kernel.posted == [(thread.process, SIGPIPE, thread,
                              {"code": 0, "pid": thread.process.pid, "uid": 555})]


@pytest.mark.parametrize("through_frame", [True, False])
def test_run_rewinds_a_call_that_must_sleep_to_its_instruction(through_frame):
    kernel = FakeKernel()
    thread = _thread()
    frame = SimpleNamespace(ip=0x1002) if through_frame else None
    thread.process.machine = SimpleNamespace(pc=0x2002)
    blocked = WouldBlock("channel", "read on pipe:[4]")
    assert SyscallDispatcher(kernel)._run(_ctx(thread, frame), _call_raising(blocked), ()) is BLOCKED
    # int 0x80 and syscall are both 2 bytes: the same call runs again when the thread wakes
    assert (frame.ip if through_frame else thread.process.machine.pc) == (0x1000 if through_frame else 0x2000)
    assert kernel.blocked == [(thread, "read on pipe:[4]", "read")]


# ---- finish -------------------------------------------------------------------------------
def test_finish_stores_the_result_in_the_abi_width_and_clears_the_call_state():
    kernel = FakeKernel()
    thread = _thread(saved_sigmask=0b10, sigmask=0b1111)
    thread.restart["timed_wait"], thread.blocked_call = "deadline", "read"
    kernel.current = thread
    eax = SimpleNamespace(value=3)
    assert SyscallDispatcher(kernel)._finish(_ctx(thread), Call(3, "read"), eax, -E.EAGAIN, None)
    assert eax.value == 2**32 - E.EAGAIN
    assert (thread.restart, thread.blocked_call) == ({}, None)
    assert (thread.sigmask, thread.saved_sigmask) == (0b10, None)


def test_finish_ends_the_slice_of_a_call_that_woke_a_thread_to_run_next():
    """Wakeup preemption (process/sched.py): the waker's call returns, then the woken runs."""
    kernel = FakeKernel()
    thread = _thread()
    kernel.current = thread
    finish = SyscallDispatcher(kernel)._finish
    assert finish(_ctx(thread), Call(1, "write"), SimpleNamespace(value=1), 7, None)
    kernel.scheduler.preempting = _thread()
    eax = SimpleNamespace(value=1)
    assert not finish(_ctx(thread), Call(1, "write"), eax, 7, None)
    assert eax.value == 7


def test_finish_keeps_sigsuspend_s_mask_and_leaves_a_no_return_call_s_registers():
    kernel = FakeKernel()
    thread = _thread(saved_sigmask=0b10, sigmask=0b1111)
    eax = SimpleNamespace(value=179)
    SyscallDispatcher(kernel)._finish(_ctx(thread), Call(179, "rt_sigsuspend"), eax, NO_RETURN, None)
    assert eax.value == 179 and (thread.sigmask, thread.saved_sigmask) == (0b1111, 0b10)


def test_finish_asks_the_kernel_only_when_a_signal_is_pending():
    kernel = FakeKernel()
    thread = _thread()
    kernel.current = thread
    finish = SyscallDispatcher(kernel)._finish
    assert finish(_ctx(thread), Call(20, "getpid"), SimpleNamespace(value=0), 100, None) is True
    thread.state = SLEEPING
    assert finish(_ctx(thread), Call(20, "getpid"), SimpleNamespace(value=0), 100, None) is False
    thread.pending_signals = 1 << 9
    assert finish(_ctx(thread), Call(20, "getpid"), SimpleNamespace(value=0), 100, None) == "asked the kernel"


def test_the_kernel_reaches_registers_only_through_the_machines_views():
    """emu/machine_registers.py (register_cell, register_fetcher) is the kernel's way to the
    CPU state's register slots; the CPU state itself stays inside emu/ (issue 15)."""
    from pathlib import Path
    kernel = Path(__file__).resolve().parents[4] / "kernel_model"
    files = sorted(kernel.glob("**/*.py"))
    assert len(files) > 50
    readers = [f"{path.relative_to(kernel)}:{number}"
               for path in files
               for number, line in enumerate(path.read_text().splitlines(), 1)
               if ".cpu_state" in line.split("#", 1)[0] or "emu.cpu_state" in line]
    assert readers == []
