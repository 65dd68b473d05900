"""The objects each system call reads fields of keep them where CPython reads them fastest
(issue 31, the simple call's path). CPython 3.11 shares an instance's attribute names with its
class only up to 30 (Objects/dictobject.c SHARED_KEYS_MAX_SIZE): past that each instance gets
a dict of its own, and every attribute read becomes a slower lookup in it. Thread and Process
keep their fields in slots; the Kernel keeps its hot ones in slots and the rest in a dict under
the limit, with every table a run may make lazily (lazy_tables.py) made. A new field must not
bring the slow case back silently."""
import functools
import io

from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from kernel_model.lazy_tables import LazyTables
from kernel_model.process.proc import Process, Thread

from .tinyelf import tiny_elf, write_program

SHARED_KEYS_MAX_SIZE = 30
# write(1, buf, 2), then exit(0)
PROGRAM = {
    "i386": "mov eax, 4; mov ebx, 1; mov ecx, DATA_ADDR; mov edx, 2; int 0x80; "
            "mov ebx, 0; mov eax, 1; int 0x80",
    "x86_64": "mov eax, 1; mov edi, 1; mov rsi, DATA_ADDR; mov edx, 2; syscall; "
              "mov edi, 0; mov eax, 60; syscall",
}


def test_threads_and_processes_have_no_instance_dict():
    assert Thread.__dictoffset__ == 0 and Process.__dictoffset__ == 0


def test_the_kernel_s_dict_stays_within_the_shared_keys_after_a_run(tmp_path, arch):
    path = write_program(tmp_path, f"prog-{arch}", tiny_elf(arch, PROGRAM[arch], b"hi"))
    stdout = CapturedOutput(name=b"pipe:[1]")
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=stdout,
                                 stderr=CapturedOutput(name=b"pipe:[2]"), report=io.StringIO()))
    assert kernel.run(kernel.spawn(str(path).encode(), [b"prog"], [])) == 0
    assert stdout.data == b"hi"                     # a run that made system calls
    lazy = [name for name, value in vars(LazyTables).items()
            if isinstance(value, functools.cached_property)]
    for name in lazy:
        getattr(kernel, name)                       # every lazily made table made
    assert lazy and set(lazy) <= set(vars(kernel))
    assert len(vars(kernel)) <= SHARED_KEYS_MAX_SIZE, sorted(vars(kernel))
