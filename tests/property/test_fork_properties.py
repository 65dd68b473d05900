"""fork isolates, vfork shares (hypothesis, tiny guest programs through the whole kernel).

The parent stores W below its stack pointer, forks or vforks; the child stores V at the same
address and exits; the parent waits and exits with the byte it reads back. After fork the
child's store went to its own copy of the memory (the parent sees W); after vfork the child
ran in the parent's address space (the parent sees V) — Linux fork(2) and vfork(2).
"""
import io

from hypothesis import given, strategies as st

from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from tests.unit.kernel_model.tinyelf import tiny_elf, write_program

PROGRAM = {
    "x86_64": """
        mov byte ptr [rsp-64], {w}
        mov eax, {call}; syscall
        test eax, eax; jnz parent
        mov byte ptr [rsp-64], {v}
        mov eax, 60; xor edi, edi; syscall
    parent:
        mov eax, 61; mov rdi, -1; xor esi, esi; xor edx, edx; xor r10d, r10d; syscall
        movzx edi, byte ptr [rsp-64]
        mov eax, 60; syscall
    """,
    "i386": """
        mov byte ptr [esp-64], {w}
        mov eax, {call}; int 0x80
        test eax, eax; jnz parent
        mov byte ptr [esp-64], {v}
        mov eax, 1; xor ebx, ebx; int 0x80
    parent:
        mov eax, 114; mov ebx, -1; xor ecx, ecx; xor edx, edx; xor esi, esi; int 0x80
        movzx ebx, byte ptr [esp-64]
        mov eax, 1; int 0x80
    """,
}
FORK = {"x86_64": 57, "i386": 2}
VFORK = {"x86_64": 58, "i386": 190}


def parent_reads(tmp_path, arch: str, call: int, w: int, v: int) -> int:
    source = PROGRAM[arch].format(w=w, v=v, call=call)
    path = write_program(tmp_path, f"prog-{arch}-{call}-{w}-{v}", tiny_elf(arch, source))
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=CapturedOutput(),
                                 stderr=CapturedOutput(), report=io.StringIO()))
    status = kernel.run(kernel.spawn(str(path).encode(), [b"prog"], []))
    assert status & 0x7F == 0, f"killed by signal {status & 0x7F}"
    return status >> 8


values = st.integers(min_value=1, max_value=255)


@given(arch=st.sampled_from(["i386", "x86_64"]), w=values, v=values)
def test_fork_child_writes_stay_in_the_child(tmp_path_factory, arch, w, v):
    assert parent_reads(tmp_path_factory.mktemp("fork"), arch, FORK[arch], w, v) == w


@given(arch=st.sampled_from(["i386", "x86_64"]), w=values, v=values)
def test_vfork_child_writes_are_the_parents_memory(tmp_path_factory, arch, w, v):
    assert parent_reads(tmp_path_factory.mktemp("vfork"), arch, VFORK[arch], w, v) == v
