"""strace's flags on `trapline run`, each against Debian's strace 6.1 given the same flags on the
same sample (compare.py: the same environment, normalized only for addresses, pids and clock
readings): the traces must be line-identical, on both arches.

The samples are ones whose output does not depend on the host's timing (fork_pipe's reads);
fileio lists the folder both run in. The forms are the strace-user habits of issue 33.
"""
import pytest

from tests.e2e.strace.compare import compare, sample_argv
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e

ARCHES = ("amd64", "i386")

FORMS = (
    ("hello", "-e trace=%pure"),                         # arch_prctl is not strace's PU
    ("hello", "-e status=unfinished"),                   # exit_group's `= ?` is unfinished
    ("hello", "-e status=failed,successful,unfinished"),
    ("hello", "-z"),
    ("hello", "-Z"),
    ("args_env", "-s 1"),                                # arrays too: -s N elements, then ...
    ("args_env", "-s 0"),
    ("args_env", "-s 0 -v"),                             # -v: every element
    ("args_env", "-s64"),
    ("args_env", "-xx"),                                 # execve's path and argv in hex too
    ("args_env", "-x"),
    ("fileio", "-e trace=/^(open|close)$"),              # a regular expression
    ("hello", "-e trace=!/write,%memory"),
    ("fileio", "-e trace=?%file"),
    ("fileio", "-e trace=!write,read"),
    ("fileio", "-e trace=?nosuch,close"),
    ("signals", "-e signal=!SIGCHLD"),
    ("signals", "-e signal=none"),
    ("signals", "-e trace=%signal"),
    ("hello", "-e trace=%process"),
    ("hello", "-e trace=none"),
    # -X: every named constant, the hand-decoded ones too (ioctl's request, fcntl's command,
    # st_mode, sigsets, siginfo, socket levels and options, epoll events, statx's flags)
    ("fileio", "-X raw"),
    ("fileio", "-X verbose"),
    ("signals", "-X raw"),
    ("sigchain", "-X verbose"),
    ("sockets", "-f -X raw"),
    ("sockets", "-f -X verbose"),
    ("exec_chain", "-f -X raw"),
    ("hello", "-qq"),                                    # no `+++ exited with 0 +++`
    ("hello", "-qqq"),
    ("signals", "-e quiet=exit"),
    ("fileio", "-e raw=open,lseek,_llseek,fcntl,fcntl64"),
    ("args_env", "-e abbrev=writev -s 1"),               # execve unabbreviated, writev not
    # -n: [  59] first (the calls that return or name a pid left out: the harness's pid
    # normalization expects them at the line's start); signal and exit lines have it too
    ("hello", "-n -e trace=!set_tid_address"),
    ("signals", "-n -e trace=!set_tid_address,getpid,kill,tkill"),
    # -e read=/write=: hex dumps (write's even when it failed, readv/writev's by buffer)
    ("fileio", "-e trace=writev,write,read -e write=1,3 -e read=3"),
    ("args_env", "-e write=1"),
    ("hello", "-e write=!1"),
    # System V IPC: i386's ipc(2) subcalls traced, numbered (ipc's own 117), shortened and
    # left raw (strace's subcall table's argument count, shifted) by the name they stand for
    ("sysv_ipc", "-n -e trace=%ipc"),
    ("sysv_ipc", "-e trace=msgsnd,msgrcv,semop -s 4"),
    ("sysv_ipc", "-e trace=%ipc -e raw=msgget,msgrcv,semctl,shmat,shmdt"),
)


# -c's table: the virtual clock's times are not the host's, so the rows are compared for their
# calls, errors and names, in an order that does not depend on time (-S name, -S nothing)
TABLES = (("fileio", "-c -S name"), ("fileio", "-c -S nothing"), ("signals", "-c -S name"),
          ("hello", "-C -S nothing"), ("sysv_ipc", "-c -S name"))


def _counts(lines: list[str]) -> list[str]:
    """A table's lines without the time columns (the first 44 characters of a row)."""
    return [line[44:] if line[:1] in " 1" and line[6:7] == " " else line for line in lines]


@pytest.mark.parametrize(("name", "flags"), TABLES, ids=[f"{n}:{f}" for n, f in TABLES])
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_the_summary_table_counts_as_strace(arch, name, flags):
    """One table per personality (the first execve is the 64-bit one), exit_group uncounted,
    ties in syscall-number order, the name column as wide as the longest name."""
    result = compare(name, arch, sample_argv(arch, name), None, options=tuple(flags.split()))
    assert any(line.endswith(" total") for line in result.native), result.native
    assert _counts(result.native) == _counts(result.sandbox), result.diff()


@pytest.mark.parametrize(("name", "flags"), FORMS, ids=[f"{n}:{f}" for n, f in FORMS])
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_a_flag_gives_straces_lines(arch, name, flags):
    result = compare(name, arch, sample_argv(arch, name), None, options=tuple(flags.split()))
    assert result.native, "strace wrote nothing: " + flags
    assert result.native == result.sandbox, result.diff()
