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
