"""A guest writing COUNT MiB into an in-memory overlay file under a LIMIT MiB memory budget;
prints "written failures peak_rss_kib". Run in its own process (its peak RSS is the measure):
python -m tests.unit.kernel_model.fs.overlay_fill_rss LIMIT COUNT"""
import io
import resource
import struct
import sys
import tempfile
from pathlib import Path

from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig

from ..test_guest_errors import EXIT
from ..tinyelf import program_elf, write_program

# buf = mmap(1 MiB); fd = open("big", O_WRONLY|O_CREAT); COUNT times write(fd, buf, 1 MiB),
# adding what was written and counting the failures; both to stdout.
SOURCE = ("mov dword ptr [DATA_ADDR], 0x676962; "
          "mov eax, 9; xor edi, edi; mov esi, 0x100000; mov edx, 3; mov r10d, 0x22; "
          "mov r8, -1; xor r9d, r9d; syscall; mov r13, rax; "
          "mov eax, 2; mov edi, DATA_ADDR; mov esi, 0x41; mov edx, 0x180; syscall; "
          "mov r12d, eax; xor r14, r14; xor r15, r15; mov rbx, {count}; "
          "again: mov eax, 1; mov edi, r12d; mov rsi, r13; mov edx, 0x100000; syscall; "
          "test rax, rax; jle bad; add r14, rax; jmp next; bad: inc r15; "
          "next: dec rbx; jnz again; "
          "mov [DATA_ADDR+8], r14; mov [DATA_ADDR+16], r15; "
          "mov eax, 1; mov edi, 1; mov esi, DATA_ADDR+8; mov edx, 16; syscall; xor eax, eax")


def main(limit_mib: int, count: int) -> None:
    folder = Path(tempfile.mkdtemp())
    path = write_program(folder, "fill", program_elf(
        "x86_64", SOURCE.format(count=count) + "; " + EXIT["x86_64"]))
    out = CapturedOutput()
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=out, stderr=CapturedOutput(),
                                 report=io.StringIO(), memory_limit=limit_mib << 20,
                                 cwd=b"/tmp"))
    status = kernel.run(kernel.spawn(str(path).encode(), [b"fill"], []))
    path.unlink()
    folder.rmdir()
    written, failures = struct.unpack("<2q", out.data)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(status, written, failures, peak)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
