"""What a new task inherits of its creator's ptrace (kernel_model/ptraced.py, Linux kernel/fork.c
kernel_clone and ptrace_init_task): the tracer's options say which kinds of new task it
follows, CLONE_UNTRACED refuses them and CLONE_PTRACE asks for it; and TracerPid."""
from types import SimpleNamespace

import pytest

from kernel_model.ptraced import (CLONE_PTRACE, CLONE_THREAD, CLONE_UNTRACED, CLONE_VFORK,
                                  PT_PTRACED, PT_TRACE_CLONE, PT_TRACE_FORK, PT_TRACE_VFORK,
                                  SIGCHLD, TRACER_PID, child_ptrace, tracer_pid)

FOLLOW_ALL = PT_PTRACED | PT_TRACE_CLONE | PT_TRACE_FORK | PT_TRACE_VFORK   # strace -f
THREADS = 0x100 | 0x200 | 0x400 | 0x800 | CLONE_THREAD          # pthread_create's (no signal)
VFORK = 0x100 | CLONE_VFORK | SIGCHLD


def task(ptrace: int):
    return SimpleNamespace(ptrace=ptrace)


@pytest.mark.parametrize("parent, flags, traced", [
    (FOLLOW_ALL, SIGCHLD, True),                                  # fork
    (FOLLOW_ALL, VFORK, True),
    (FOLLOW_ALL, THREADS, True),
    (PT_PTRACED, SIGCHLD, False),                                 # strace without -f
    (PT_PTRACED, THREADS, False),
    (PT_PTRACED | PT_TRACE_CLONE, THREADS, True),                 # the GDB stub's
    (PT_PTRACED | PT_TRACE_CLONE, SIGCHLD, False),
    (PT_PTRACED | PT_TRACE_CLONE, 0, True),                       # a clone whose exit signal is not SIGCHLD
    (PT_PTRACED | PT_TRACE_FORK, VFORK, False),                   # a vfork is TRACEVFORK's
    (FOLLOW_ALL, SIGCHLD | CLONE_UNTRACED, False),
    (PT_PTRACED, SIGCHLD | CLONE_PTRACE, True),
    (PT_PTRACED, SIGCHLD | CLONE_PTRACE | CLONE_UNTRACED, True),  # CLONE_PTRACE wins
    (0, SIGCHLD | CLONE_PTRACE, False),                           # nobody to trace it
    (PT_TRACE_FORK, SIGCHLD, False),                              # options of a detached tracer
])
def test_a_new_task_is_traced_when_its_tracer_follows_it(parent, flags, traced):
    assert child_ptrace(task(parent), flags) == (parent if traced else 0)


def test_tracer_pid_is_the_tool_s_place_for_a_traced_task_only():
    assert tracer_pid(task(PT_PTRACED)) == TRACER_PID == 1
    assert tracer_pid(task(0)) == 0
