"""Property of a sleeping call met by several signals in one delivery (signals/delivery.py,
Signals._finish_interrupted_call): whatever the order of ignored and handled signals, the
call is ended exactly once, by the first handled one (EINTR for a sleep, which is never
restarted), and stays the thread's interrupted call until then; with ignored signals alone it
runs again as it was. The tools hear of the interruption once either way: a traced task's
ignored signal ends the sleep too, which is then made again (strace's ERESTART* line). Before, an ignored signal dequeued first forgot the call, and the
handled one after it ended nothing (LTP kill12's child slept on)."""
from types import SimpleNamespace

from hypothesis import example, given, strategies as st

from kernel_model import errno as E
from kernel_model.blocking import MADE_AGAIN
from kernel_model.signals.delivery import Signals

SYSCALL_PC = 0x401000


class FakeMachine:
    arch = SimpleNamespace(bits=64, mask=(1 << 64) - 1)

    def __init__(self):
        self.pc = SYSCALL_PC
        self.regs = {"rax": 35}            # rewound: the call number (nanosleep)

    def set_reg(self, name, value):
        self.regs[name] = value


def sleeper():
    machine = FakeMachine()
    thread = SimpleNamespace(blocked_call="nanosleep", restart={"deadline": 10**9},
                             process=SimpleNamespace(machine=machine))
    return thread, machine


@given(st.lists(st.booleans(), min_size=1, max_size=8), st.booleans())
@example([False, True], False)            # LTP kill12: SIGHUP ignored, then SIGCHLD handled
@example([False, False, True, True], True)
def test_the_first_handled_signal_ends_the_sleep_once(handled, sa_restart):
    thread, machine = sleeper()
    ended = []
    signals = Signals(SimpleNamespace(debug=SimpleNamespace(
        syscall_interrupted=lambda t, call, *_: ended.append(call))))
    for is_handled in handled:
        signals._finish_interrupted_call(thread, restart=sa_restart, handled=is_handled)
    assert ended == ["nanosleep"]
    if any(handled):
        assert thread.blocked_call is None
        assert machine.regs["rax"] == -E.EINTR & machine.arch.mask and machine.pc == SYSCALL_PC + 2
    else:
        assert thread.blocked_call == "nanosleep"
        assert machine.regs["rax"] == 35 and machine.pc == SYSCALL_PC
        assert thread.restart == {"deadline": 10**9, MADE_AGAIN: True}    # its deadline kept
