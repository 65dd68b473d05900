"""Overlay file bytes are in the guest's memory budget (fs/databudget.py), from guest programs
on both ABIs: writing into an in-memory file until it no longer fits gives ENOSPC as a full
tmpfs does, the data written so far stays, and freeing it (ftruncate) gives the room back."""
import io
import struct
import subprocess
import sys
from pathlib import Path

from kernel_model import errno as E
from kernel_model.fs import CapturedOutput, O_RDONLY
from kernel_model.kernel import Kernel, KernelConfig

from ..tinyelf import program_elf, write_program
from ..test_guest_errors import EXIT

MiB = 1 << 20
LIMIT = 48 * MiB

# buf = mmap(1 MiB, filled with 'A' at its first byte); fd = open("big", O_WRONLY|O_CREAT);
# write 1 MiB until a write answers <= 0; ftruncate(fd, 0); lseek 0; write 1 MiB again.
# stdout gets (bytes written, the failing answer, the last write's answer) as three words.
FILL = {
    "x86_64": "mov dword ptr [DATA_ADDR], 0x676962; "
              "mov eax, 9; xor edi, edi; mov esi, 0x100000; mov edx, 3; mov r10d, 0x22; "
              "mov r8, -1; xor r9d, r9d; syscall; mov r13, rax; mov byte ptr [r13], 0x41; "
              "mov eax, 2; mov edi, DATA_ADDR; mov esi, 0x41; mov edx, 0x180; syscall; "
              "mov r12d, eax; xor r14, r14; "
              "again: mov eax, 1; mov edi, r12d; mov rsi, r13; mov edx, 0x100000; syscall; "
              "test rax, rax; jle full; add r14, rax; jmp again; "
              "full: mov [DATA_ADDR+8], r14; mov [DATA_ADDR+16], rax; "
              "mov eax, 77; mov edi, r12d; xor esi, esi; syscall; "
              "mov eax, 8; mov edi, r12d; xor esi, esi; xor edx, edx; syscall; "
              "mov eax, 1; mov edi, r12d; mov rsi, r13; mov edx, 0x100000; syscall; "
              "mov [DATA_ADDR+24], rax; "
              "mov eax, 1; mov edi, 1; mov esi, DATA_ADDR+8; mov edx, 24; syscall; xor eax, eax",
    "i386": "mov dword ptr [DATA_ADDR], 0x676962; "
            "mov eax, 192; xor ebx, ebx; mov ecx, 0x100000; mov edx, 3; mov esi, 0x22; "
            "mov edi, -1; xor ebp, ebp; int 0x80; mov ebp, eax; mov byte ptr [ebp], 0x41; "
            "mov eax, 5; mov ebx, DATA_ADDR; mov ecx, 0x41; mov edx, 0x180; int 0x80; "
            "mov edi, eax; xor esi, esi; "
            "again: mov eax, 4; mov ebx, edi; mov ecx, ebp; mov edx, 0x100000; int 0x80; "
            "test eax, eax; jle full; add esi, eax; jmp again; "
            "full: mov [DATA_ADDR+8], esi; mov [DATA_ADDR+12], eax; "
            "mov eax, 93; mov ebx, edi; xor ecx, ecx; int 0x80; "
            "mov eax, 19; mov ebx, edi; xor ecx, ecx; xor edx, edx; int 0x80; "
            "mov eax, 4; mov ebx, edi; mov ecx, ebp; mov edx, 0x100000; int 0x80; "
            "mov [DATA_ADDR+16], eax; "
            "mov eax, 4; mov ebx, 1; mov ecx, DATA_ADDR+8; mov edx, 12; int 0x80; xor eax, eax",
}


def run_fill(tmp_path, arch):
    elf = program_elf(arch, FILL[arch] + "; " + EXIT[arch])
    path = write_program(tmp_path, f"fill-{arch}", elf)
    out = CapturedOutput()
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=out, stderr=CapturedOutput(),
                                 report=io.StringIO(), memory_limit=LIMIT, cwd=b"/tmp"))
    status = kernel.run(kernel.spawn(str(path).encode(), [b"fill"], []))
    assert status == 0, f"status {status:#x}"
    words = struct.unpack("<3q" if arch == "x86_64" else "<3i", out.data)
    return words, kernel


def test_a_file_filling_memory_gets_enospc_and_the_room_back(tmp_path, arch):
    (written, failed, again), kernel = run_fill(tmp_path, arch)
    assert failed == -E.ENOSPC
    assert again == MiB                              # ftruncate gave the room back
    # What the guest's own mappings (its 8 MiB stack reservation, the buffer) left went into
    # the file, and no more.
    assert LIMIT - 12 * MiB < written <= LIMIT
    assert kernel.fs.data_budget.used == MiB        # what the file holds now
    f = kernel.fs.open(b"/tmp/big", O_RDONLY, 0, b"/", _View())
    assert f.stat().size == MiB and f.pread(2, 0) == b"A\0"


class _View:
    pid = 1

    def exe_path(self):
        return b"/fill"

    def maps_text(self):
        return b""

    def fd_targets(self):
        return {}

    def cwd(self):
        return b"/"


def fill_in_a_process(limit_mib: int, count: int) -> tuple[int, int, int]:
    done = subprocess.run([sys.executable, "-m", "tests.unit.kernel_model.fs.overlay_fill_rss",
                           str(limit_mib), str(count)], capture_output=True, check=True,
                           cwd=Path(__file__).resolve().parents[4])
    status, written, failures, peak_kib = map(int, done.stdout.split())
    assert status == 0
    return written, failures, peak_kib


def test_peak_rss_stays_within_the_budget():
    """A guest writing 384 MiB under a 64 MiB budget: the host process grows by about the
    budget, not by what the guest tried to write (it grew by all of it before)."""
    _, _, baseline = fill_in_a_process(64, 1)
    written, failures, peak = fill_in_a_process(64, 384)
    assert written <= 64 * MiB and failures >= 384 - 64
    assert (peak - baseline) * 1024 < 64 * MiB + 32 * MiB
