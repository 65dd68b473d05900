"""Guest calls that once raised a Python exception inside the kernel now answer as Linux does:
read from a write-only host stdout (EBADF), alarm(0xffffffff) read back through setitimer (the
i386 timeval's 32-bit tv_sec), and ftruncate of an overlay file to 2^40 bytes (a sparse file)."""
import os
import signal
import struct

from kernel_model import errno as E
from kernel_model.fs import CapturedOutput, StdioFile
from kernel_model.kernel import Kernel, KernelConfig

from .tinyelf import program_elf, write_program

EXIT = {"i386": "mov ebx, eax; mov eax, 1; int 0x80", "x86_64": "mov edi, eax; mov eax, 60; syscall"}


def run(tmp_path, arch, source, stdout=None):
    path = write_program(tmp_path, f"prog-{arch}", program_elf(arch, source + "; " + EXIT[arch]))
    stdout = stdout or CapturedOutput(name=b"pipe:[1]")
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=stdout, stderr=CapturedOutput()))
    status = kernel.run(kernel.spawn(str(path).encode(), [b"prog"], []))
    assert status & 0x7F == 0, f"killed by signal {status & 0x7F}"
    return status >> 8, getattr(stdout, "data", b"")


READ_STDOUT = {"i386": "mov eax, 3; mov ebx, 1; mov ecx, DATA_ADDR; mov edx, 1; int 0x80",
               "x86_64": "mov eax, 0; mov edi, 1; mov esi, DATA_ADDR; mov edx, 1; syscall"}


def test_read_from_a_write_only_host_stdout_is_ebadf(tmp_path, arch):
    fd = os.open(tmp_path / "out.txt", os.O_WRONLY | os.O_CREAT, 0o600)   # `trapline run > out.txt`
    try:
        code, _ = run(tmp_path, arch, READ_STDOUT[arch], stdout=StdioFile(fd))
    finally:
        os.close(fd)
    assert code == -E.EBADF & 0xFF


# alarm(0xffffffff); setitimer(ITIMER_REAL, NULL, &old); write(1, &old, size); exit(0)
ALARM = {
    "i386": "mov eax, 27; mov ebx, 0xffffffff; int 0x80; "
            "mov eax, 104; xor ebx, ebx; xor ecx, ecx; mov edx, DATA_ADDR; int 0x80; "
            "mov eax, 4; mov ebx, 1; mov ecx, DATA_ADDR; mov edx, 16; int 0x80; xor eax, eax",
    "x86_64": "mov eax, 37; mov edi, 0xffffffff; syscall; "
              "mov eax, 38; xor edi, edi; xor esi, esi; mov edx, DATA_ADDR; syscall; "
              "mov eax, 1; mov edi, 1; mov esi, DATA_ADDR; mov edx, 32; syscall; xor eax, eax",
}


def test_alarm_of_the_largest_unsigned_reads_back(tmp_path, arch):
    """Natively on a 64-bit kernel the i386 tv_sec is the low 32 bits of the seconds left
    (compat put_old_itimerval32): 0xffffffff s minus the few ns that passed -> 0xfffffffe."""
    code, out = run(tmp_path, arch, ALARM[arch])
    assert code == 0
    fmt = "<IiIi" if arch == "i386" else "<qqqq"
    interval_s, interval_us, value_s, value_us = struct.unpack(fmt, out)
    assert (interval_s, interval_us) == (0, 0)
    assert value_s == 0xFFFFFFFE and 0 <= value_us < 10**6


# fd = open(DATA_ADDR "big", O_RDWR|O_CREAT, 0600); ftruncate to 2^40; pread 4 bytes at 2^39
# into DATA_ADDR+16 (pre-filled with 0xff); write them to stdout; exit(pread's result).
TRUNCATE = {
    "i386": "mov dword ptr [DATA_ADDR], 0x676962; mov dword ptr [DATA_ADDR+16], -1; "
            "mov eax, 5; mov ebx, DATA_ADDR; mov ecx, 0x42; mov edx, 0x180; int 0x80; mov edi, eax; "
            "mov eax, 194; mov ebx, edi; xor ecx, ecx; mov edx, 0x100; int 0x80; "
            "mov eax, 180; mov ebx, edi; mov ecx, DATA_ADDR+16; mov edx, 4; xor esi, esi; "
            "push edi; mov edi, 0x80; int 0x80; pop edi; push eax; "
            "mov eax, 4; mov ebx, 1; mov ecx, DATA_ADDR+16; mov edx, 4; int 0x80; pop eax",
    "x86_64": "mov dword ptr [DATA_ADDR], 0x676962; mov dword ptr [DATA_ADDR+16], -1; "
              "mov eax, 2; mov edi, DATA_ADDR; mov esi, 0x42; mov edx, 0x180; syscall; mov r12d, eax; "
              "mov eax, 77; mov edi, r12d; mov rsi, 0x10000000000; syscall; "
              "mov eax, 17; mov edi, r12d; mov esi, DATA_ADDR+16; mov edx, 4; "
              "mov r10, 0x8000000000; syscall; push rax; "
              "mov eax, 1; mov edi, 1; mov esi, DATA_ADDR+16; mov edx, 4; syscall; pop rax",
}


def test_ftruncate_of_an_overlay_file_to_a_terabyte_is_sparse(tmp_path, arch, monkeypatch):
    monkeypatch.chdir(tmp_path)                 # "big" is created in the overlay, not the host
    code, out = run(tmp_path, arch, TRUNCATE[arch])
    assert (code, out) == (4, bytes(4))
    assert not (tmp_path / "big").exists()


WRITE_STDOUT = {"i386": "mov eax, 4; mov ebx, 1; mov ecx, DATA_ADDR; mov edx, 1; int 0x80",
                "x86_64": "mov eax, 1; mov edi, 1; mov esi, DATA_ADDR; mov edx, 1; syscall"}


def test_a_write_to_a_host_pipe_whose_reader_left_is_sigpipe_for_the_guest(tmp_path, arch):
    """`trapline run PROG | head -0`: the guest's write gets what Linux gives it (pipe(7)):
    SIGPIPE, whose default action ends it; trapline itself goes on (issue 26)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    path = write_program(tmp_path, f"prog-{arch}", program_elf(arch, WRITE_STDOUT[arch] + "; " + EXIT[arch]))
    try:
        kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=StdioFile(write_end),
                                     stderr=CapturedOutput()))
        status = kernel.run(kernel.spawn(str(path).encode(), [b"prog"], []))
    finally:
        os.close(write_end)
    assert status & 0x7F == signal.SIGPIPE
