"""pidfd_open/pidfd_send_signal/pidfd_getfd (they were ENOSYS: LTP pidfd_*), and kill's
permission check (check_kill_permission): a child that gave up root may not signal its root
parent (EPERM), where it could before. Both ABIs."""
from kernel_model import errno as E

from ...call_script import run_script
from ..test_syscalls import exit_code
from .test_mknod_affinity import run_program

O_RDONLY, POLLIN = 0, 1


def test_pidfd_calls(arch):
    results, buf, _ = run_script(arch, [
        ("pidfd_open", 100, 0),                      # the script's own process: 3
        ("pidfd_send_signal", 3, 0, 0, 0),
        ("pidfd_send_signal", 3, 0, 0, 1),
        ("pidfd_send_signal", 1, 0, 0, 0),           # stdout is no pidfd
        ("pidfd_send_signal", 3, 10, "BUF", 0),      # the siginfo names signal 0
        ("pidfd_open", 4242, 0), ("pidfd_open", 100, 1), ("pidfd_open", 0, 0),
        ("pidfd_getfd", 3, 1, 0),                    # its own stdout, again: 4
        ("pidfd_getfd", 3, 99, 0),
        ("read", 3, "BUF", 8),
        ("fcntl" if arch == "x86_64" else "fcntl64", 3, 1, 0),     # F_GETFD: close-on-exec
    ])
    assert results == [3, 0, -E.EINVAL, -E.EBADF, -E.EINVAL, -E.ESRCH, -E.EINVAL, -E.EINVAL,
                       4, -E.EBADF, -E.EINVAL, 1]


CHILD_KILLS_PARENT = {
    "x86_64": """
        mov eax, 57; syscall                       # fork
        test eax, eax; jnz parent
        mov eax, 117; mov edi, 1000; mov esi, 1000; mov edx, 1000; syscall   # setresuid
        mov eax, 62; mov edi, 100; mov esi, 0; syscall                       # kill(100, 0)
        mov edi, eax; mov eax, 60; syscall
    parent:
        mov edi, eax; lea rsi, [rsp - 16]; xor edx, edx; xor r10d, r10d; mov eax, 61; syscall
        mov edi, [rsp - 16]; shr edi, 8; mov eax, 60; syscall
    """,
    "i386": """
        mov eax, 2; int 0x80                       # fork
        test eax, eax; jnz parent
        mov eax, 208; mov ebx, 1000; mov ecx, 1000; mov edx, 1000; int 0x80  # setresuid32
        mov eax, 37; mov ebx, 100; mov ecx, 0; int 0x80                      # kill(100, 0)
        mov ebx, eax; mov eax, 1; int 0x80
    parent:
        mov ebx, eax; lea ecx, [esp - 16]; xor edx, edx; mov eax, 7; int 0x80  # waitpid
        mov ebx, [esp - 16]; shr ebx, 8; mov eax, 1; int 0x80
    """,
}


def test_an_unprivileged_child_may_not_signal_its_root_parent(tmp_path, arch):
    status, _, kernel = run_program(tmp_path, arch, CHILD_KILLS_PARENT[arch])
    assert not kernel.unimplemented
    assert exit_code(status) == -E.EPERM & 0xFF


POLL_PIDFD = {
    "x86_64": """
        lea rax, [rip + handler]; mov [rsp - 64], rax
        mov rax, 0x14000004; mov [rsp - 56], rax
        lea rax, [rip + restorer]; mov [rsp - 48], rax
        mov qword ptr [rsp - 40], 0
        mov eax, 13; mov edi, 17; lea rsi, [rsp - 64]; xor edx, edx; mov r10d, 8; syscall
        mov eax, 57; syscall                                  # fork
        test eax, eax; jnz parent
        mov qword ptr [rsp - 128], 0; mov qword ptr [rsp - 120], 1000000
        mov eax, 35; lea rdi, [rsp - 128]; xor esi, esi; syscall      # sleep 1 ms
        mov eax, 60; xor edi, edi; syscall
    parent:
        mov edi, eax; xor esi, esi; mov eax, 434; syscall     # pidfd_open(child)
        mov [rsp - 96], eax; mov dword ptr [rsp - 92], 1      # struct pollfd {fd, POLLIN}
        lea rdi, [rsp - 96]; mov esi, 1; mov edx, -1; mov eax, 7; syscall
        mov edi, eax; mov eax, 60; syscall
    handler: ret
    restorer: mov eax, 15; syscall
    """,
    "i386": """
        sub esp, 256                # no red zone on i386: the signal frame goes below esp
        lea eax, [handler]; mov [esp - 64], eax
        mov dword ptr [esp - 60], 0x14000004
        lea eax, [restorer]; mov [esp - 56], eax
        mov dword ptr [esp - 52], 0; mov dword ptr [esp - 48], 0
        mov eax, 174; mov ebx, 17; lea ecx, [esp - 64]; xor edx, edx; mov esi, 8; int 0x80
        mov eax, 2; int 0x80                                  # fork
        test eax, eax; jnz parent
        mov dword ptr [esp - 128], 0; mov dword ptr [esp - 124], 1000000
        mov eax, 162; lea ebx, [esp - 128]; xor ecx, ecx; int 0x80    # sleep 1 ms
        mov eax, 1; xor ebx, ebx; int 0x80
    parent:
        mov ebx, eax; xor ecx, ecx; mov eax, 434; int 0x80    # pidfd_open(child)
        mov [esp + 96], eax; mov dword ptr [esp + 100], 1
        lea ebx, [esp + 96]; mov ecx, 1; mov edx, -1; mov eax, 168; int 0x80
        mov ebx, eax; mov eax, 1; int 0x80
    handler: ret
    restorer: mov eax, 173; int 0x80
    """,
}


def test_a_pidfd_poll_is_not_lost_to_the_child_s_sigchld(tmp_path, arch):
    """The exit that makes a pidfd readable also sends SIGCHLD, which has a handler here: the
    poll returns the ready pidfd (1), not EINTR (LTP pidfd_open03 got -1)."""
    status, _, kernel = run_program(tmp_path, arch, POLL_PIDFD[arch])
    assert not kernel.unimplemented
    assert exit_code(status) == 1
