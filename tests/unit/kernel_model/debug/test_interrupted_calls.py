"""What a tracer reads of a call a signal interrupted (kernel_model/debug/interrupted_calls.py,
signals/sleep_kinds.py restart_code): the code Linux's sleep returns before the delivery
(-ERESTARTSYS for a read, -ERESTART_RESTARTBLOCK for a relative sleep and a timed poll,
-ERESTARTNOHAND for pause, an absolute sleep, an endless poll, msgrcv, -EINTR for epoll_wait
and semop; i386's ipc(2) as its operation) and the call's number, which the sandbox keeps in
the result register of the rewound call; nothing for a thread in no call or whose call
completed before the signal."""
from types import SimpleNamespace

from hypothesis import given, strategies as st

from kernel_model.blocking import CONDITION_MET, RESTART_BLOCK
from kernel_model.debug.interrupted_calls import InterruptedCalls
from kernel_model.signals.sleep_kinds import (EINTR_WITHOUT_HANDLER, NEVER_RESTARTED,
                                              RESTARTED_WITHOUT_HANDLER, TIMED_SOCKET_WAIT,
                                              restart_code)

EINTR, ERESTARTSYS, ERESTARTNOHAND, ERESTART_RESTARTBLOCK = 4, 512, 514, 516


def test_each_sleep_returns_linux_code():
    assert restart_code("read", (3, 0, 1)) == ERESTARTSYS
    assert restart_code("wait4", (0, 0, 0)) == ERESTARTSYS
    assert restart_code("nanosleep", (0, 0, 0)) == ERESTART_RESTARTBLOCK
    assert restart_code("clock_nanosleep", (0, 0, 0)) == ERESTART_RESTARTBLOCK
    assert restart_code("clock_nanosleep", (1, 1, 0)) == ERESTARTNOHAND        # TIMER_ABSTIME
    assert restart_code("poll", (0, 0, 300)) == ERESTART_RESTARTBLOCK
    assert restart_code("poll", (0, 0, 0xFFFFFFFF)) == ERESTARTNOHAND          # for ever
    assert restart_code("pause", (0, 0, 0)) == ERESTARTNOHAND
    assert restart_code("msgrcv", (0, 0, 0)) == ERESTARTNOHAND
    assert restart_code("epoll_wait", (0, 0, 0)) == EINTR


def test_a_socket_wait_under_a_timeout_says_eintr():
    """net/core/sock.c sock_intr_errno: a recv under SO_RCVTIMEO, a recv for ever."""
    calls, thread = sleeper("recvfrom", {"rax": 45, "rdi": 3, "rsi": 0, "rdx": 1},
                            restart={TIMED_SOCKET_WAIT: True})
    assert calls.interrupted_syscall(thread) == (EINTR, 45)
    calls, thread = sleeper("recvfrom", {"rax": 45, "rdi": 3, "rsi": 0, "rdx": 1})
    assert calls.interrupted_syscall(thread) == (ERESTARTSYS, 45)


def test_a_futex_wait_under_a_timeout_says_restart_block():
    """kernel/futex/waitwake.c futex_wait: -ERESTART_RESTARTBLOCK with a timeout (its sleep
    sets the restart block), -ERESTARTSYS for ever."""
    regs = {"rax": 202, "rdi": 0x1000, "rsi": 0, "rdx": 0}
    calls, thread = sleeper("futex", regs, restart={RESTART_BLOCK: True, "deadline": 5})
    assert calls.interrupted_syscall(thread) == (ERESTART_RESTARTBLOCK, 202)
    calls, thread = sleeper("futex", regs)
    assert calls.interrupted_syscall(thread) == (ERESTARTSYS, 202)


@given(st.sampled_from(sorted(NEVER_RESTARTED - {"ipc"})),
       st.tuples(*[st.integers(0, 0xFFFFFFFF)] * 3))
def test_a_never_restarted_call_never_says_erestartsys(call, args):
    """The calls a handler's SA_RESTART does not restart end with EINTR, or with a code that
    means EINTR to a handler: never -ERESTARTSYS."""
    code = restart_code(call, args)
    assert code != ERESTARTSYS
    assert (code == EINTR) == (call in EINTR_WITHOUT_HANDLER)
    assert call in RESTARTED_WITHOUT_HANDLER or code == EINTR


def sleeper(call, regs, restart=None):
    machine = SimpleNamespace(arch=SimpleNamespace(bits=64))
    thread = SimpleNamespace(blocked_call=call, restart=restart or {},
                             process=SimpleNamespace(machine=machine))
    threads = SimpleNamespace(read_register=lambda t, name: regs[name])
    return InterruptedCalls(threads), thread


def test_the_rewound_call_shows_its_code_and_number():
    calls, thread = sleeper("read", {"rax": 0, "rdi": 3, "rsi": 0x1000, "rdx": 1})
    assert calls.interrupted_syscall(thread) == (ERESTARTSYS, 0)


def test_no_call_or_a_completed_one_shows_nothing():
    calls, thread = sleeper(None, {})
    assert calls.interrupted_syscall(thread) is None
    calls, thread = sleeper("futex", {"rax": 202, "rdi": 0, "rsi": 0, "rdx": 0},
                            restart={CONDITION_MET: True})
    assert calls.interrupted_syscall(thread) is None
