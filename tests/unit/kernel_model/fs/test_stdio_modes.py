"""The sandbox's stdio as the guest's fcntl(F_GETFL) sees it: the ends of pipes, stdin
read-only and stdout/stderr write-only, as a program whose output is piped sees them natively
(strace's comparison harness runs the native side so: F_GETFL gives 1, O_WRONLY, for fds 1 and
2). The sandbox used to show stdout and stderr O_RDWR."""
import os
import struct

from kernel_model.fs import CapturedOutput, StdioFile
from kernel_model.kernel import Kernel, KernelConfig

from ..tinyelf import program_elf, write_program

O_RDONLY, O_WRONLY, O_ACCMODE = 0, 1, 3
GETFL = {
    "i386": "mov eax, 55; mov ebx, {fd}; mov ecx, 3; int 0x80; mov dword ptr [DATA_ADDR+{at}], eax",
    "x86_64": "mov eax, 72; mov edi, {fd}; mov esi, 3; syscall; mov dword ptr [DATA_ADDR+{at}], eax",
}
WRITE_EXIT = {
    "i386": "mov eax, 4; mov ebx, 1; mov ecx, DATA_ADDR; mov edx, 12; int 0x80; "
            "mov eax, 1; xor ebx, ebx; int 0x80",
    "x86_64": "mov eax, 1; mov edi, 1; mov esi, DATA_ADDR; mov edx, 12; syscall; "
              "mov eax, 60; xor edi, edi; syscall",
}


def test_stdin_is_read_only_and_stdout_stderr_write_only(tmp_path, arch):
    source = "; ".join([GETFL[arch].format(fd=fd, at=4 * fd) for fd in (0, 1, 2)] + [WRITE_EXIT[arch]])
    path = write_program(tmp_path, f"getfl-{arch}", program_elf(arch, source))
    read_end, write_end = os.pipe()
    try:
        kernel = Kernel(KernelConfig(stdin=StdioFile(0), stdout=StdioFile(write_end),
                                     stderr=CapturedOutput()))
        assert kernel.run(kernel.spawn(str(path).encode(), [b"prog"], [])) == 0
        flags = struct.unpack("<iii", os.read(read_end, 12))
    finally:
        os.close(read_end)
        os.close(write_end)
    assert [f & O_ACCMODE for f in flags[:2]] == [O_RDONLY, O_WRONLY]
    assert StdioFile(2).flags & O_ACCMODE == O_WRONLY
