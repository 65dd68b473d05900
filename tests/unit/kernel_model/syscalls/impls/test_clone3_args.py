"""clone3 reads and checks struct clone_args as kernel/fork.c does (copy_clone_args_from_user,
clone3_args_valid, copy_process's first checks) before any child exists (LTP clone302: the
extra-size, fs-newns, invalid-pidfd and zero-stack-size cases were accepted or EPERM, and the
child of the last ran at address 0). Each errno was checked natively with a gcc program on both
arches (host 6.18); clone(CLONE_PIDFD | CLONE_THREAD) is EINVAL as in the modeled 6.1 (copy_process
before PIDFD_THREAD)."""
import struct

import pytest

from kernel_model import errno as E
from tests.property.syscall_fuzz_guest import UNMAPPED

from ...call_script import BUF, run_script

SIGCHLD, CSIGNAL = 17, 0xFF
CLONE_VM, CLONE_FS, CLONE_SIGHAND, CLONE_PIDFD = 0x100, 0x200, 0x800, 0x1000
CLONE_THREAD, CLONE_NEWNS, CLONE_PARENT_SETTID, CLONE_DETACHED = 0x10000, 0x20000, 0x100000, 0x400000
SLOT = 128


def _args(flags=0, pidfd=0, exit_signal=SIGCHLD, stack=0, stack_size=0, set_tid_size=0,
          extra=0) -> bytes:
    fields = (flags, pidfd, 0, 0, exit_signal, stack, stack_size, 0, 0, set_tid_size, 0, extra)
    return struct.pack("<12Q", *fields).ljust(SLOT, b"\0")


CASES = [                                     # (clone_args, size, errno)
    (_args(), 0, E.EINVAL),                   # zero size
    (_args(), 63, E.EINVAL),                  # below CLONE_ARGS_SIZE_VER0
    (_args(), 4097, E.E2BIG),                 # above a page
    (_args(extra=0x100), 96, E.E2BIG),        # a field past the kernel's struct is set
    (_args(flags=CLONE_SIGHAND), 88, E.EINVAL),
    (_args(flags=CLONE_FS | CLONE_NEWNS), 88, E.EINVAL),     # before the namespace's EPERM
    (_args(flags=CLONE_PIDFD, pidfd=UNMAPPED), 88, E.EFAULT),
    (_args(exit_signal=CSIGNAL + 1), 88, E.EINVAL),
    (_args(stack=BUF), 88, E.EINVAL),         # a stack without its size
    (_args(stack_size=4), 88, E.EINVAL),      # a size without its stack
    (_args(flags=CLONE_DETACHED), 88, E.EINVAL),
    (_args(flags=1 << 34), 88, E.EINVAL),     # no such flag
    (_args(flags=CLONE_THREAD | CLONE_SIGHAND | CLONE_VM), 88, E.EINVAL),  # a thread's exit signal
    (_args(set_tid_size=1), 88, E.EINVAL),    # set_tid_size without set_tid
]


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_clone3_refuses_bad_arguments_before_making_a_child(arch):
    data = b"".join(args for args, _, _ in CASES)
    calls = [("clone3", UNMAPPED, 88)]
    calls += [("clone3", f"BUF+{i * SLOT}", size) for i, (_, size, _) in enumerate(CASES)]
    calls += [("clone", CLONE_PIDFD | CLONE_PARENT_SETTID | SIGCHLD, 0, "BUF", 0, 0),
              ("clone", CLONE_PIDFD | CLONE_THREAD | CLONE_SIGHAND | CLONE_VM, 0, "BUF", 0, 0)]
    results, _, kernel = run_script(arch, calls, data=data)
    assert results == [-E.EFAULT] + [-errno for _, _, errno in CASES] + [-E.EINVAL, -E.EINVAL]
    assert len(kernel.processes) <= 1         # no child was made
