"""ptrace(2) as far as the model has tracers (syscalls/impls/ptrace.py): a task a tool already
ptraces gets EPERM for PTRACE_TRACEME (kernel/ptrace.c ptrace_traceme); any other request, and
an untraced task's PTRACE_TRACEME (its parent would become a guest tracer), are not modeled:
-ENOSYS, reported once as an unimplemented call with the ABI's number."""
from types import SimpleNamespace

import pytest

from kernel_model import errno as E
from kernel_model.errno import GuestErrno
from kernel_model.ptraced import PT_PTRACED
from kernel_model.syscalls.impls.ptrace import sys_ptrace

PTRACE_TRACEME, PTRACE_ATTACH = 0, 16


def ctx(abi: str, ptrace: int):
    reported = []
    kernel = SimpleNamespace(report_unimplemented=lambda proc, name, nr: reported.append((name, nr)))
    return SimpleNamespace(kernel=kernel, abi=abi, proc=None, thread=SimpleNamespace(ptrace=ptrace)), reported


@pytest.mark.parametrize("abi, number", (("x86_64", 101), ("i386", 26)))
def test_traceme_of_a_traced_task_is_eperm_and_the_rest_is_not_modeled(abi, number):
    traced, reported = ctx(abi, PT_PTRACED)
    with pytest.raises(GuestErrno) as refused:
        sys_ptrace(traced, PTRACE_TRACEME, 0, 0, 0)
    assert refused.value.errno == E.EPERM and reported == []
    assert sys_ptrace(traced, PTRACE_ATTACH, 100, 0, 0) == -E.ENOSYS
    untraced, reported_untraced = ctx(abi, 0)
    assert sys_ptrace(untraced, PTRACE_TRACEME, 0, 0, 0) == -E.ENOSYS
    assert reported == reported_untraced == [("ptrace", number)]
