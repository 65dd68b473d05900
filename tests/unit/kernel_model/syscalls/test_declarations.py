"""Each syscall has one declaration, its decorator (kernel_model/syscalls/registry.py): the
dispatcher's argument count, strace's argument kinds and the implementation come from it.
Every commonly traced syscall is decoded, and the declarations agree with the implementations."""
import pytest

from emu.errors import InternalError
from kernel_model.syscalls import numbers_i386, numbers_x86_64
from kernel_model.syscalls.kinds import Kind, Ret
from kernel_model.syscalls.registry import all_declarations, return_kind, signature, syscall, words

IMPLEMENTATIONS = all_declarations()

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


@pytest.mark.parametrize("name", sorted(IMPLEMENTATIONS))
def test_each_declaration_names_a_real_syscall_and_covers_what_its_implementation_reads(name):
    declared = IMPLEMENTATIONS[name]
    assert name in numbers_i386.BY_NAME or name in numbers_x86_64.BY_NAME
    for abi in ("x86_64", "i386"):
        arguments = declared.args_for(abi)
        if arguments is not None:
            assert words(arguments) <= 6
            assert declared.nargs <= words(declared.args) or declared.nargs <= words(declared.i386)


def test_the_i386_offset_split_over_two_registers_is_declared_per_abi():
    """pread64(fd, buf, count, loff_t): x86-64 passes the offset in one register, i386 in
    two (low word first), so the implementation reads five words on i386 and four elsewhere."""
    assert [kind for _, kind in signature("pread64")] == [Kind.FD, Kind.BUF_OUT, Kind.ULONG,
                                                          Kind.LONG]
    assert signature("pread64", "i386")[-1] == ("offset", Kind.OFFSET64_SPLIT)
    assert IMPLEMENTATIONS["pwrite64"].nargs == words(signature("pwrite64", "i386")) == 5


def test_a_declaration_shorter_than_what_the_implementation_reads_is_refused():
    with pytest.raises(InternalError, match="reads 3 words, its declaration has 2"):
        @syscall("test_only_call", args=(("fd", Kind.FD), ("buf", Kind.PTR)))
        def sys_test(ctx, fd, buf, count):
            return 0
    assert "test_only_call" not in IMPLEMENTATIONS


def test_a_name_registered_twice_is_refused():
    with pytest.raises(InternalError, match="registered twice"):
        @syscall("read", args=(("fd", Kind.FD),))
        def sys_read_again(ctx, fd):
            return 0


def test_return_kinds():
    assert return_kind("mmap") is Ret.HEX and return_kind("brk") is Ret.HEX
    assert return_kind("exit_group") is Ret.NONE
    assert return_kind("read") is Ret.INT
    assert signature("no_such_call") is None
