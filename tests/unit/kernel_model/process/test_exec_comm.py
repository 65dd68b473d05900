"""The command name (comm) execve gives, and fork keeps.

begin_new_exec (fs/exec.c) names the task after the last component of the path the caller
gave execve (kbasename(bprm->filename)), not after the file it resolves to: busybox re-running
itself through /proc/self/exe is "exe" (strace shows its prctl(PR_GET_NAME, "exe")), where the
sandbox said "busybox". A forked child starts with its parent's comm (dup_task_struct), one
PR_SET_NAME gave included.

The program, run as `prog`, execs /proc/self/exe with one more argument; the new image reads its
comm, renames itself "renamed", forks, and the child reads its comm: the child writes its name,
the parent, once it has waited, the one exec gave.
Where the host runs x86 binaries the same file runs natively and must print the same.
"""
import subprocess

import pytest

from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig

from ..tinyelf import program_elf, write_program

NR = {"x86_64": {"execve": 59, "prctl": 157, "fork": 57, "wait4": 61, "write": 1, "exit": 60},
      "i386": {"execve": 11, "prctl": 172, "fork": 2, "wait4": 114, "write": 4, "exit": 1}}
ARGS = {"x86_64": ("rdi", "rsi", "rdx", "r10"), "i386": ("ebx", "ecx", "edx", "esi")}
GATE = {"x86_64": "syscall", "i386": "int 0x80"}
PR_SET_NAME, PR_GET_NAME = 15, 16
# Data: 0 "/proc/self/exe", 16 "renamed", 32 argv[3], 64 the image's comm, 80 the child's.
PATH, NEW_NAME, ARGV, COMM, CHILD_COMM = 0, 16, 32, 64, 80


def _call(arch: str, name: str, *args) -> str:
    moves = [f"mov {reg}, {value}" for reg, value in zip(ARGS[arch], args)]
    return "; ".join([f"mov eax, {NR[arch][name]}", *moves, GATE[arch]])


def _store(arch: str, at: str, text: bytes) -> str:
    """Byte stores of `text` and its NUL at DATA_ADDR+`at`."""
    return "; ".join(f"mov byte ptr [DATA_ADDR+{at}+{i}], {b}" for i, b in enumerate(text + b"\0"))


def comm_program(arch: str) -> bytes:
    word = 8 if arch == "x86_64" else 4
    sp = "rsp" if arch == "x86_64" else "esp"
    ptr = "qword" if word == 8 else "dword"
    data = lambda at: f"DATA_ADDR+{at}"                         # noqa: E731
    source = "; ".join([
        f"cmp dword ptr [{sp}], 1", "jne again",
        _store(arch, PATH, b"/proc/self/exe"),
        f"mov {ptr} ptr [{data(ARGV)}], {data(PATH)}", f"mov {ptr} ptr [{data(ARGV + word)}], {data(PATH)}",
        f"mov {ptr} ptr [{data(ARGV + 2 * word)}], 0",
        _call(arch, "execve", data(PATH), data(ARGV), data(ARGV + 2 * word)),
        _call(arch, "exit", 1),
        "again: " + _call(arch, "prctl", PR_GET_NAME, data(COMM)),
        _store(arch, NEW_NAME, b"renamed"),
        _call(arch, "prctl", PR_SET_NAME, data(NEW_NAME)),
        _call(arch, "fork"), "test eax, eax", "jz child",
        _call(arch, "wait4", -1, 0, 0, 0),
        _call(arch, "write", 1, data(COMM), 16),
        _call(arch, "exit", 0),
        "child: " + _call(arch, "prctl", PR_GET_NAME, data(CHILD_COMM)),
        _call(arch, "write", 1, data(CHILD_COMM), 16),
        _call(arch, "exit", 0)])
    return program_elf(arch, source)


@pytest.fixture
def program(tmp_path, arch):
    return write_program(tmp_path, f"comm-{arch}", comm_program(arch))


def _names(out: bytes) -> tuple[bytes, bytes]:
    """(the exec'd image's comm, its child's): the parent writes after wait4, the child first."""
    return out[16:32].split(b"\0")[0], out[:16].split(b"\0")[0]


def test_exec_names_the_task_after_the_path_given_and_fork_keeps_it(program):
    stdout = CapturedOutput()
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=stdout, stderr=CapturedOutput()))
    assert kernel.run(kernel.spawn(str(program).encode(), [b"prog"], [])) == 0
    assert _names(stdout.data) == (b"exe", b"renamed")


def test_native_agrees(program):
    native = subprocess.run([str(program)], capture_output=True, timeout=10)
    assert native.returncode == 0
    assert _names(native.stdout) == (b"exe", b"renamed")
