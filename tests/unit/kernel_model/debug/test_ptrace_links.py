"""A tool ptraces a process through the door (kernel_model/debug/ptrace_links.py), and the
kernel keeps it in each task as Linux does (kernel_model/ptraced.py): the tool's options say
whether the threads and the fork children the program makes are traced too (strace -f's
PTRACE_O_TRACECLONE/TRACEFORK/TRACEVFORK; the GDB stub's threads only; strace without -f, the
first task only), and a detach ends it. Both arches, on the threads and fork_pipe samples."""
import io
from pathlib import Path

import pytest

from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig

ROOT = Path(__file__).resolve().parents[4]


def _spawned(arch: str, sample: str):
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=CapturedOutput(),
                                 stderr=CapturedOutput(), report=io.StringIO()))
    path = str(ROOT / "samples" / "bin" / arch / sample).encode()
    return kernel, kernel.spawn(path, [path], [])


class Children:
    """The fork children the kernel announces (the door's fork event)."""
    def __init__(self):
        self.born = []

    def fork(self, parent, child):
        self.born.append(child)


def _run(arch: str, sample: str, **options):
    kernel, proc = _spawned(arch, sample)
    children = Children()
    kernel.debug.subscribe(children)
    kernel.debug.ptrace_attach(proc, **options)
    assert kernel.run(proc) == 0
    return proc, children.born


@pytest.mark.parametrize("follow", (True, False))
def test_the_threads_are_traced_when_the_tool_follows_them(arch, follow):
    proc, _ = _run(arch, "threads", follow_threads=follow)
    main, *others = proc.threads
    assert len(others) == 4 and main.ptrace
    assert all(bool(t.ptrace) == follow for t in others)


@pytest.mark.parametrize("follow", (True, False))
def test_the_fork_children_are_traced_when_the_tool_follows_them(arch, follow):
    proc, born = _run(arch, "fork_pipe", follow_forks=follow)
    assert len(born) >= 2
    assert all(bool(child.threads[0].ptrace) == follow for child in born)


def test_a_detached_process_is_not_traced(arch):
    kernel, proc = _spawned(arch, "hello")
    debug, thread = kernel.debug, proc.threads[0]
    assert not debug.is_ptraced(thread)
    debug.ptrace_attach(proc)
    assert debug.is_ptraced(thread)
    debug.ptrace_detach(proc)
    assert not debug.is_ptraced(thread) and thread.ptrace == 0


def test_a_run_no_tool_ptraces_does_not_make_the_part(arch):
    """(nor imports its module: tests/unit/trapline/test_startup_imports.py)"""
    kernel, proc = _spawned(arch, "fork_pipe")
    assert kernel.run(proc) == 0
    assert "_ptrace" not in vars(kernel.debug)
