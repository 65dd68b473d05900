"""A ptraced thread's sleeping call and the signal that woke it (signals/traced_calls.py,
delivery.py _finish_interrupted_call): Linux queues even an ignored signal for a ptraced task
(kernel/signal.c sig_ignored), so the calls that fail with EINTR whatever the action (epoll,
rt_sigtimedwait, System V IPC, io_getevents) return -EINTR, and they do so before the tracer's
signal-delivery-stop, so that the call stays ended whatever the tracer does with the signal.
The other calls (restarted, or ended with EINTR only for a handler) and an untraced thread's
are left as they were; a SIGKILL ends the task in its call."""
from types import SimpleNamespace

from hypothesis import example, given, strategies as st

from kernel_model import errno as E
from kernel_model.ptraced import PT_PTRACED
from kernel_model.signals.delivery import EINTR_WITHOUT_HANDLER, NEVER_RESTARTED, Signals, bit
from kernel_model.signals.traced_calls import end_sleep_for_tracer

SYSCALL_PC = 0x401000
SIGUSR1, SIGKILL, SIGCHLD = 10, 9, 17
CALLS = sorted(NEVER_RESTARTED | {"read", "wait4", "futex"})


class FakeMachine:
    arch = SimpleNamespace(bits=64, mask=(1 << 64) - 1)

    def __init__(self):
        self.pc = SYSCALL_PC
        self.regs = {"rax": 232}            # rewound: the call's number

    def set_reg(self, name, value):
        self.regs[name] = value

    def reg(self, name):
        return {"ebx": 1}.get(name, self.regs.get(name))      # an ipc(2) call sleeps in semop


def sleeper(call: str, ptraced: bool, pending: int = 0):
    machine = FakeMachine()
    thread = SimpleNamespace(blocked_call=call, restart={}, ptrace=PT_PTRACED if ptraced else 0,
                             pending_signals=pending, sigmask=0, held_signals=0, context=None,
                             process=SimpleNamespace(machine=machine, pending_signals=0))
    ended = []
    signals = Signals(SimpleNamespace(debug=SimpleNamespace(
        syscall_interrupted=lambda t, name, *_: ended.append(name))))
    return thread, machine, signals, ended


def ended_with_eintr(thread, machine) -> bool:
    return thread.blocked_call is None and machine.pc == SYSCALL_PC + 2 and \
        machine.regs["rax"] == -E.EINTR & machine.arch.mask


@given(st.sampled_from(CALLS), st.booleans())
@example("epoll_wait", True)
@example("epoll_wait", False)
@example("rt_sigtimedwait", True)
def test_an_ignored_signal_ends_a_call_with_eintr_only_for_a_ptraced_thread(call, ptraced):
    thread, machine, signals, ended = sleeper(call, ptraced)
    signals._finish_interrupted_call(thread, restart=True, handled=False)
    if ptraced and call in EINTR_WITHOUT_HANDLER:
        assert ended_with_eintr(thread, machine) and ended == [call]
    else:
        assert thread.blocked_call == call and machine.pc == SYSCALL_PC


@given(st.sampled_from(CALLS), st.sampled_from((SIGUSR1, SIGCHLD, SIGKILL)))
@example("epoll_wait", SIGUSR1)
@example("epoll_wait", SIGKILL)
@example("semtimedop", SIGCHLD)
@example("nanosleep", SIGUSR1)
def test_a_ptraced_thread_s_eintr_call_ends_before_its_signal_is_taken(call, sig):
    thread, machine, signals, ended = sleeper(call, True, pending=bit(sig))
    end_sleep_for_tracer(signals, thread)
    assert thread.pending_signals == bit(sig)             # the tracer's stop takes it next
    if call in EINTR_WITHOUT_HANDLER and sig != SIGKILL:
        assert ended_with_eintr(thread, machine) and ended == [call]
    else:
        assert thread.blocked_call == call and machine.pc == SYSCALL_PC and ended == []


def test_a_blocked_signal_ends_nothing():
    thread, machine, signals, ended = sleeper("epoll_wait", True, pending=bit(SIGUSR1))
    thread.sigmask = bit(SIGUSR1)
    end_sleep_for_tracer(signals, thread)
    assert thread.blocked_call == "epoll_wait" and ended == []
