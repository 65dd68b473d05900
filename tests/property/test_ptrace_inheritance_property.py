"""Property of a new task's ptrace (kernel_model/ptraced.py child_ptrace, after Linux's
copy_process/ptrace_init_task): whatever the creator's bits and the clone flags, the new task is
traced exactly as its creator (the same tracer, the same options) or not at all; never when its
creator is not; always when a traced creator passes CLONE_PTRACE; never with CLONE_UNTRACED
alone; and otherwise exactly when the tracer follows that kind of task (vfork, clone, fork)."""
from types import SimpleNamespace

from hypothesis import example, given, strategies as st

from kernel_model.ptraced import (CLONE_PTRACE, CLONE_THREAD, CLONE_UNTRACED, CLONE_VFORK,
                                  CSIGNAL, PT_PTRACED, PT_TRACE_CLONE, PT_TRACE_FORK,
                                  PT_TRACE_VFORK, SIGCHLD, child_ptrace)

BITS = (PT_PTRACED, PT_TRACE_CLONE, PT_TRACE_FORK, PT_TRACE_VFORK)
FLAGS = (CLONE_PTRACE, CLONE_VFORK, CLONE_THREAD, CLONE_UNTRACED)


def combined(picked) -> int:
    value = 0
    for bit in picked:
        value |= bit
    return value


@given(st.sets(st.sampled_from(BITS)).map(combined), st.sets(st.sampled_from(FLAGS)).map(combined),
       st.sampled_from((SIGCHLD, 0, 10)))
@example(PT_PTRACED | PT_TRACE_FORK, 0, SIGCHLD)            # a followed fork
@example(PT_PTRACED | PT_TRACE_VFORK, CLONE_VFORK, SIGCHLD)
@example(PT_PTRACED | PT_TRACE_CLONE, CLONE_THREAD, 0)      # a followed thread
@example(PT_PTRACED, CLONE_PTRACE | CLONE_UNTRACED, SIGCHLD)
def test_a_new_task_is_traced_as_its_creator_or_not_at_all(parent, flags, exit_signal):
    child = child_ptrace(SimpleNamespace(ptrace=parent), flags | exit_signal)
    assert child in (0, parent)
    if not parent & PT_PTRACED:
        assert child == 0
        return
    if flags & CLONE_PTRACE:
        assert child == parent
        return
    if flags & CLONE_UNTRACED:
        assert child == 0
        return
    kind = PT_TRACE_VFORK if flags & CLONE_VFORK else \
        PT_TRACE_CLONE if flags & CLONE_THREAD or (flags | exit_signal) & CSIGNAL != SIGCHLD \
        else PT_TRACE_FORK
    assert (child == parent) == bool(parent & kind)
