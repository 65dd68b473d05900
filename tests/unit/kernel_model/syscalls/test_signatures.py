"""Every commonly traced syscall has a signature, and signatures name real syscalls."""
import pytest

from kernel_model.syscalls import numbers_i386, numbers_x86_64
from kernel_model.syscalls.signatures import SIGNATURES, Kind, Ret, return_kind, signature

COMMON = """read write readv writev pread64 pwrite64 open openat close lseek _llseek stat lstat fstat
stat64 lstat64 fstat64 newfstatat statx access faccessat faccessat2 getdents getdents64 readlink
readlinkat getcwd chdir fchdir fcntl fcntl64 dup dup2 dup3 ioctl mmap mmap2 munmap mprotect brk
madvise arch_prctl set_thread_area set_tid_address set_robust_list rseq prlimit64 getrlimit
ugetrlimit uname getpid getppid gettid getuid getgid geteuid getegid getuid32 getgid32 geteuid32
getegid32 clock_gettime clock_gettime64 gettimeofday time nanosleep clock_nanosleep
clock_nanosleep_time64 getrandom exit exit_group rt_sigaction rt_sigprocmask sysinfo umask unlink
unlinkat mkdir mkdirat rename renameat renameat2 ftruncate ftruncate64 fsync fdatasync utimensat
utimensat_time64 chmod fchmod fchmodat chown fchown lchown fchownat symlink symlinkat link linkat
rmdir pipe pipe2 wait4 waitid kill tgkill tkill fork vfork clone clone3 execve futex poll ppoll
select _newselect pselect6 getpgid setpgid getsid setsid getpgrp sigaltstack rt_sigreturn
sigreturn alarm setitimer getitimer sched_yield sched_getaffinity socket connect sendfile
sendfile64 statfs fstatfs truncate mremap""".split()


@pytest.mark.parametrize("name", COMMON)
def test_common_syscall_has_signature(name):
    assert signature(name) is not None


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_signature_names_a_real_syscall(name):
    assert name in numbers_i386.BY_NAME or name in numbers_x86_64.BY_NAME
    assert len(SIGNATURES[name]) <= 6
    assert all(isinstance(kind, Kind) for _, kind in SIGNATURES[name])


def test_return_kinds():
    assert return_kind("mmap") is Ret.HEX and return_kind("brk") is Ret.HEX
    assert return_kind("exit_group") is Ret.NONE
    assert return_kind("read") is Ret.INT
    assert signature("no_such_call") is None
