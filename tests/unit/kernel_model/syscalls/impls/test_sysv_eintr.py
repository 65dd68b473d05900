"""A semop or msgrcv asleep when a handled signal comes ends in EINTR even under SA_RESTART
(signal(7): System V IPC calls are never restarted; ipc/sem.c returns -EINTR). Before, the
call ran again after the handler and slept for ever (LTP semop03 timed out). Both ABIs: the
program installs a SIGALRM handler with SA_RESTART, arms alarm(1), sleeps, and exits with
the low byte of what the call returned (SA_SIGINFO: i386 then builds the rt frame that
rt_sigreturn, the restorer's call, undoes)."""
import pytest

from kernel_model import errno as E

from .test_mknod_affinity import run_program
from ..test_syscalls import exit_code

SA_SIGINFO, SA_RESTART, SA_RESTORER = 0x4, 0x10000000, 0x04000000
NR = {"x86_64": {"sigaction": 13, "alarm": 37, "semget": 64, "semop": 65, "msgget": 68,
                 "msgrcv": 70, "sigreturn": 15},
      "i386": {"sigaction": 174, "alarm": 27, "semget": 393, "semop": 420, "msgget": 399,
               "msgrcv": 401, "sigreturn": 173}}

X86_64 = """
    lea rax, [rip + handler]; mov [rsp - 64], rax
    mov rax, {flags}; mov [rsp - 56], rax
    lea rax, [rip + restorer]; mov [rsp - 48], rax
    mov qword ptr [rsp - 40], 0
    mov eax, {sigaction}; mov edi, 14; lea rsi, [rsp - 64]; xor edx, edx; mov r10d, 8; syscall
    mov eax, {alarm}; mov edi, 1; syscall
    {sleep}
    mov edi, eax; mov eax, 60; syscall
handler: ret
restorer: mov eax, {sigreturn}; syscall
"""
I386 = """
    lea eax, [handler]; mov [esp - 64], eax
    mov dword ptr [esp - 60], {flags}
    lea eax, [restorer]; mov [esp - 56], eax
    mov dword ptr [esp - 52], 0; mov dword ptr [esp - 48], 0
    mov eax, {sigaction}; mov ebx, 14; lea ecx, [esp - 64]; xor edx, edx; mov esi, 8; int 0x80
    mov eax, {alarm}; mov ebx, 1; int 0x80
    {sleep}
    mov ebx, eax; mov eax, 1; int 0x80
handler: ret
restorer: mov eax, {sigreturn}; int 0x80
"""
# semget(IPC_PRIVATE, 1, 0600), then semop(id, {0, -1, 0}, 1) on the value 0
SEMOP = {"x86_64": "mov eax, {semget}; xor edi, edi; mov esi, 1; mov edx, 0x180; syscall; "
                   "mov edi, eax; mov dword ptr [rsp - 128], 0xffff0000; "
                   "mov word ptr [rsp - 124], 0; lea rsi, [rsp - 128]; mov edx, 1; "
                   "xor r10d, r10d; mov eax, {semop}; syscall",
         "i386": "mov eax, {semget}; xor ebx, ebx; mov ecx, 1; mov edx, 0x180; int 0x80; "
                 "mov ebx, eax; mov dword ptr [esp - 128], 0xffff0000; "
                 "mov word ptr [esp - 124], 0; lea ecx, [esp - 128]; mov edx, 1; "
                 "xor esi, esi; mov eax, {semop}; int 0x80"}
# msgget(IPC_PRIVATE, 0600), then msgrcv(id, buf, 16, 0, 0) on the empty queue
MSGRCV = {"x86_64": "mov eax, {msgget}; xor edi, edi; mov esi, 0x180; syscall; mov edi, eax; "
                    "lea rsi, [rsp - 256]; mov edx, 16; xor r10d, r10d; xor r8d, r8d; "
                    "mov eax, {msgrcv}; syscall",
          "i386": "mov eax, {msgget}; xor ebx, ebx; mov ecx, 0x180; int 0x80; mov ebx, eax; "
                  "lea ecx, [esp - 256]; mov edx, 16; xor esi, esi; xor edi, edi; "
                  "mov eax, {msgrcv}; int 0x80"}


@pytest.mark.parametrize("sleep", [SEMOP, MSGRCV], ids=["semop", "msgrcv"])
def test_a_handled_signal_ends_the_sleep_in_eintr(tmp_path, arch, sleep):
    numbers = NR[arch]
    body = sleep[arch].format(**numbers)
    source = (X86_64 if arch == "x86_64" else I386).format(
        flags=hex(SA_SIGINFO | SA_RESTART | SA_RESTORER), sleep=body, **numbers)
    status, _, kernel = run_program(tmp_path, arch, source)
    assert not kernel.unimplemented, kernel.unimplemented
    assert exit_code(status) == -E.EINTR & 0xFF
