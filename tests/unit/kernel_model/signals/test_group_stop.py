"""A stop signal's default action on a thread asleep in a call (signals/group_stop.py): the
calls that fail with EINTR whatever the signal (signal(7)'s list after a stop and SIGCONT:
epoll_wait, semop, sigtimedwait, io_getevents) return -EINTR; every other stays rewound, to
be made again after the continue, and the tools see it end once (strace's `= ? ERESTART*`).
Either way the process stops and the tools hear of the stop after the call's end."""
from types import SimpleNamespace

from hypothesis import example, given, strategies as st

from kernel_model import errno as E
from kernel_model.process.proc import RUNNABLE, STOPPED
from kernel_model.signals.delivery import EINTR_WITHOUT_HANDLER, NEVER_RESTARTED, Signals
from kernel_model.signals.group_stop import stop_process

SYSCALL_PC = 0x401000
SIGSTOP = 19
CALLS = sorted(NEVER_RESTARTED | {"read", "wait4", "futex", "nanosleep", "clock_nanosleep"})


class FakeMachine:
    arch = SimpleNamespace(bits=64, mask=(1 << 64) - 1)

    def __init__(self):
        self.pc = SYSCALL_PC
        self.regs = {"rax": 232}            # rewound: the call's number

    def set_reg(self, name, value):
        self.regs[name] = value

    def reg(self, name):
        return self.regs[name]


def stopped_sleeper(call: str, ptraced: bool):
    """A thread asleep in `call` (i386's ipc(2) sleeps as its operation: syscalls/impls/
    sysv_ipc.py names it), woken by SIGSTOP, and what the tools heard, in order."""
    machine = FakeMachine()
    heard = []
    proc = SimpleNamespace(machine=machine, pending_signals=0, ppid=1, stop_report=None)
    thread = SimpleNamespace(blocked_call=call, restart={}, ptrace=1 if ptraced else 0,
                             pending_signals=0, sigmask=0, held_signals=0, state=RUNNABLE,
                             process=proc, context=None)
    proc.threads = [thread]
    debug = SimpleNamespace(syscall_interrupted=lambda t, name, *_: heard.append(("ended", name)),
                            signal_stopped=lambda p, t, sig, info: heard.append(("stopped", sig)))
    stop_process(Signals(SimpleNamespace(debug=debug, processes={})), thread, SIGSTOP,
                 {"code": 0, "pid": 1})
    return thread, machine, heard


@given(st.sampled_from(CALLS), st.booleans())
@example("epoll_wait", False)
@example("clock_nanosleep", False)
@example("read", True)
@example("msgrcv", False)           # made again (-ERESTARTNOHAND), ipc(2)'s msgrcv too
@example("semop", False)            # -EINTR
def test_a_stop_ends_the_sleeping_call_as_linux_does(call, ptraced):
    thread, machine, heard = stopped_sleeper(call, ptraced)
    kind = call
    assert thread.state == STOPPED and thread.process.stop_report == (5, SIGSTOP)
    assert heard == [("ended", call), ("stopped", SIGSTOP)]
    if kind in EINTR_WITHOUT_HANDLER:
        assert thread.blocked_call is None and machine.pc == SYSCALL_PC + 2
        assert machine.regs["rax"] == -E.EINTR & machine.arch.mask
    else:
        # made again after SIGCONT: still the rewound call, reported once
        assert thread.blocked_call == call and machine.pc == SYSCALL_PC
        assert machine.regs["rax"] == 232 and thread.restart


def test_a_stopped_process_is_not_stopped_again():
    thread, _machine, heard = stopped_sleeper("read", False)
    debug_calls = len(heard)
    stop_process(Signals(SimpleNamespace(debug=None, processes={})), thread, SIGSTOP, {})
    assert thread.state == STOPPED and len(heard) == debug_calls


class FakeContext:
    """A switched-out thread's saved registers (emu's context: reg_read/reg_write by id)."""

    def __init__(self, values: dict):
        from emu.registers import REGISTER_IDS
        self.ids = REGISTER_IDS
        self.values = {REGISTER_IDS[name]: value for name, value in values.items()}

    def reg_read(self, reg_id):
        return self.values[reg_id]

    def reg_write(self, reg_id, value):
        self.values[reg_id] = value


@given(st.sampled_from(CALLS))
@example("epoll_wait")
@example("read")
def test_every_other_thread_ends_its_call_and_is_stopped(call):
    """The group stop in a switched-out thread: its call ends in its saved registers, it is
    stopped, and the tools see its stop without the signal's delivery (info None)."""
    thread, machine, heard = stopped_sleeper("read", False)
    proc = thread.process
    context = FakeContext({"rax": 232, "rip": SYSCALL_PC, "ebx": 1})
    other = SimpleNamespace(blocked_call=call, restart={}, ptrace=0, pending_signals=0,
                            sigmask=0, held_signals=0, state=RUNNABLE, process=proc,
                            context=context)
    thread.state = RUNNABLE
    thread.context = None
    proc.threads.append(other)
    heard.clear()
    debug = SimpleNamespace(syscall_interrupted=lambda t, name, *_: heard.append(("ended", t)),
                            signal_stopped=lambda p, t, sig, info: heard.append((t, info)))
    stop_process(Signals(SimpleNamespace(debug=debug, processes={})), thread, SIGSTOP, {"code": 0})
    assert other.state == STOPPED
    assert heard[-2:] == [("ended", other), (other, None)]
    if call in EINTR_WITHOUT_HANDLER:
        assert other.blocked_call is None and context.reg_read(context.ids["rip"]) == SYSCALL_PC + 2
        assert context.reg_read(context.ids["rax"]) == -E.EINTR & machine.arch.mask
    else:
        assert other.blocked_call == call and context.reg_read(context.ids["rip"]) == SYSCALL_PC
