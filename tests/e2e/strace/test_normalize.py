"""compare.py's normalization: each thing native strace varies on between runs is joined, and
a real difference (wrong data, another result, a missing line) still shows. -f traces:
processes labeled by the process tree, whichever of them the host ran first (a child's own clone
printed before its parent's clone returned); a child's CPU times; where a parent takes an exited
child's ignored SIGCHLD and the call it interrupted (sigchld_order.py); the reads of a pipe
(pipe_reads.py)."""
from hypothesis import given, strategies as st

from tests.e2e.strace.compare import normalize
from trapline.strace.output import aligned
from trapline.strace.strings import quote


def _trace(*lines: tuple[int, str, str | None]) -> str:
    """strace -f -o's lines: the pid in 5 columns, `= ` at column 40."""
    return "".join(f"{pid:<5} " + (aligned(head, result, 6) if result is not None else head) + "\n"
                   for pid, head, result in lines)


CLONE = "clone(child_stack=NULL, flags=SIGCHLD)"
NATIVE = _trace((10, "clone(child_stack=NULL, flags=SIGCHLD <unfinished ...>", None),
                (11, CLONE, "12"), (12, "setsid()", "12"),
                (10, "<... clone resumed>)", "11"), (11, "exit_group(0)", "?"),
                (10, "exit_group(0)", "?"))
SANDBOX = _trace((100, CLONE, "101"), (101, CLONE, "102"), (101, "exit_group(0)", "?"),
                 (102, "setsid()", "102"), (100, "exit_group(0)", "?"))


def test_labels_follow_the_process_tree():
    assert normalize(NATIVE) == normalize(SANDBOX) == [
        "P0 clone(child_stack=NULL, flags=SIGCHLD) = PID", "P0 exit_group(0) = ?",
        "P1 clone(child_stack=NULL, flags=SIGCHLD) = PID", "P1 exit_group(0) = ?",
        "P2 setsid() = PID"]


def test_sigreturn_restoring_a_pid_is_normalized_and_other_values_are_not():
    """rt_sigreturn returns the interrupted code's return value: a pid right after wait4 (sh's
    SIGCHLD handler), which differs from run to run; any other value stays compared."""
    native = normalize(_trace((10, "clone(child_stack=NULL, flags=SIGCHLD)", "31236"),
                              (10, "rt_sigreturn({mask=[]})", "31236"),
                              (10, "rt_sigreturn({mask=[]})", "7"), (31236, "exit_group(0)", "?")))
    sandbox = normalize(_trace((100, "clone(child_stack=NULL, flags=SIGCHLD)", "101"),
                               (100, "rt_sigreturn({mask=[]})", "101"),
                               (100, "rt_sigreturn({mask=[]})", "7"), (101, "exit_group(0)", "?")))
    assert native == sandbox
    assert native[1:3] == ["P0 rt_sigreturn({mask=[]}) = PID", "P0 rt_sigreturn({mask=[]}) = 7"]


def _lines(*lines: tuple[str, str | None]) -> str:
    """A one-process trace (no pid prefix), `= ` at column 40."""
    return "".join((aligned(head, result, 0) if result is not None else head) + "\n"
                   for head, result in lines)


def _sigchld(pid: int, status: int, stime: str = "0") -> tuple[str, None]:
    return (f"--- SIGCHLD {{si_signo=SIGCHLD, si_code=CLD_EXITED, si_pid={pid}, si_uid=0, "
            f"si_status={status}, si_utime=0, si_stime={stime}}} ---", None)


def _reaped(pid: int, status: int) -> tuple[str, str]:
    return (f"wait4({pid}, [{{WIFEXITED(s) && WEXITSTATUS(s) == {status}}}], 0, NULL)", str(pid))


FORK = ("fork()", "31236")
EXIT = ("exit_group(0)", "?")


def test_a_child_s_cpu_times_are_clock_readings_and_its_status_is_compared():
    """si_utime/si_stime are the host's CPU ticks (natively 0 or 1 for fork_pipe's writer)."""
    native = normalize(_lines(FORK, _sigchld(31236, 5, "1 /* 0.01 s */"), _reaped(31236, 5), EXIT))
    sandbox = normalize(_lines(FORK, _sigchld(31236, 5), _reaped(31236, 5), EXIT))
    assert native == sandbox and "si_utime=T, si_stime=T}" in native[1]
    other_status = normalize(_lines(FORK, _sigchld(31236, 6), _reaped(31236, 5), EXIT))
    assert other_status != native


def test_an_ipc_structure_s_times_and_pids_are_normalized_and_a_never_is_compared():
    """msgctl/shmctl IPC_STAT: the times are clock readings, the pids the host's; a 0 (never
    received, never detached) is the same on both sides and stays compared."""
    def stat(when: int, pid: int, rtime: int = 0) -> str:
        return (f"msgctl(0, IPC_STAT, {{msg_perm={{uid=0, gid=0, mode=0600, key=0, cuid=0, "
                f"cgid=0}}, msg_stime={when}, msg_rtime={rtime}, msg_ctime={when}, msg_qnum=2, "
                f"msg_qbytes=16384, msg_lspid={pid}, msg_lrpid=0}}) = 0\n")
    native, sandbox = normalize(stat(1795963855, 24747)), normalize(stat(1700000000, 100))
    assert native == sandbox and "msg_stime=T, msg_rtime=0," in native[0]
    assert "msg_lspid=PID, msg_lrpid=0}" in native[0]
    assert normalize(stat(1700000000, 100, rtime=1700000000)) != sandbox
    shm = "shm_cpid=7, shm_lpid=0, shm_nattch=1, shm_atime=5, shm_dtime=0, shm_ctime=5"
    assert "shm_cpid=PID, shm_lpid=0, shm_nattch=1, shm_atime=T, shm_dtime=0, shm_ctime=T" in \
        normalize(f"shmctl(0, IPC_STAT, {{{shm}}}) = 0\n")[0]


def test_an_ignored_sigchld_is_compared_right_before_the_wait_that_reaps_its_child():
    """Natively the parent takes it before or after wait4 (or at fork's unblocking
    rt_sigprocmask), as the child's exit fell; the sandbox's place is one of those."""
    unblock = ("rt_sigprocmask(SIG_SETMASK, [], NULL, 8)", "0")
    after = normalize(_lines(FORK, unblock, ("close(3)", "0"), _reaped(31236, 5),
                             _sigchld(31236, 5), EXIT))
    early = normalize(_lines(FORK, unblock, _sigchld(31236, 5), ("close(3)", "0"),
                             _reaped(31236, 5), EXIT))
    before = normalize(_lines(FORK, unblock, ("close(3)", "0"), _sigchld(31236, 5),
                              _reaped(31236, 5), EXIT))
    assert after == early == before
    assert before.index("wait4(PID, [{WIFEXITED(s) && WEXITSTATUS(s) == 5}], 0, NULL) = PID") == \
        before.index(normalize(_lines(_sigchld(1, 5)))[0]) + 1
    # what is still seen: a missing SIGCHLD, another status, a line of the parent's out of place
    assert normalize(_lines(FORK, unblock, ("close(3)", "0"), _reaped(31236, 5), EXIT)) != before
    assert normalize(_lines(FORK, unblock, ("close(3)", "0"), _reaped(31236, 5),
                            _sigchld(31236, 9), EXIT)) != before
    assert normalize(_lines(FORK, ("close(3)", "0"), unblock, _sigchld(31236, 5),
                            _reaped(31236, 5), EXIT)) != before


def test_an_ignored_sigchld_spelled_raw_is_placed_as_the_named_one():
    """-X raw spells the SIGCHLD line with numbers (si_signo=17, si_code=0x1): the same move
    (sockets -f -X raw on i386 put it before or after wait4 natively)."""
    raw = ("--- SIGCHLD {si_signo=17, si_code=0x1, si_pid=31236, si_uid=0, si_status=5, "
           "si_utime=0, si_stime=0} ---", None)
    after = normalize(_lines(FORK, ("close(3)", "0"), _reaped(31236, 5), raw, EXIT))
    before = normalize(_lines(FORK, ("close(3)", "0"), raw, _reaped(31236, 5), EXIT))
    assert after == before
    killed = (raw[0].replace("si_code=0x1", "si_code=0x5"), None)      # not an exit: stays
    assert normalize(_lines(FORK, _reaped(31236, 5), killed, EXIT)) != \
        normalize(_lines(FORK, killed, _reaped(31236, 5), EXIT))


def test_an_ignored_sigchld_spelled_verbose_is_placed_as_the_named_one():
    """-X verbose: si_signo=17 /* SIGCHLD */, si_code=0x1 /* CLD_EXITED */ (sockets -f -X
    verbose on i386 put it before or after wait4, 1 of 4 runs of the flags file); a handler
    installed in that spelling keeps every SIGCHLD in place."""
    verbose = ("--- SIGCHLD {si_signo=17 /* SIGCHLD */, si_code=0x1 /* CLD_EXITED */, "
               "si_pid=31236, si_uid=0, si_status=5, si_utime=0, si_stime=0} ---", None)
    after = normalize(_lines(FORK, ("close(3)", "0"), _reaped(31236, 5), verbose, EXIT))
    before = normalize(_lines(FORK, ("close(3)", "0"), verbose, _reaped(31236, 5), EXIT))
    assert after == before
    handler = ("rt_sigaction(17 /* SIGCHLD */, {sa_handler=0x401000, sa_mask=[], "
               "sa_flags=0x4000000 /* SA_RESTORER */, sa_restorer=0x401100}, NULL, 8)", "0")
    assert normalize(_lines(handler, FORK, _reaped(31236, 5), verbose, EXIT)) != \
        normalize(_lines(handler, FORK, verbose, _reaped(31236, 5), EXIT))


def test_a_sigchld_a_handler_takes_and_one_whose_child_is_not_reaped_stay_in_place():
    handler = ("rt_sigaction(SIGCHLD, {sa_handler=0x401136, sa_mask=[], sa_flags=SA_RESTORER, "
               "sa_restorer=0x401000}, NULL, 8)", "0")
    sigreturn = ("rt_sigreturn({mask=[]})", "31236")
    handled_after = normalize(_lines(handler, FORK, _reaped(31236, 5), _sigchld(31236, 5),
                                     sigreturn, EXIT))
    handled_before = normalize(_lines(handler, FORK, _sigchld(31236, 5), sigreturn,
                                      _reaped(31236, 5), EXIT))
    assert handled_after != handled_before
    unreaped = [("pause()", "? ERESTARTNOHAND (To be restarted if no handler)"),
                _sigchld(31236, 5), EXIT]
    assert normalize(_lines(FORK, *unreaped)) != normalize(_lines(FORK, unreaped[1], unreaped[0],
                                                                  unreaped[2]))


RESTARTED = "? ERESTARTSYS (To be restarted if SA_RESTART is set)"


def test_a_call_an_ignored_sigchld_interrupted_and_made_again_is_compared_once():
    """Under ptrace Linux queues the ignored SIGCHLD (sig_ignored), so a parent asleep when
    its child exits shows the interrupted call, the signal and the call again: natively when
    the child exits during the read, not when it exits after."""
    interrupted = normalize(_lines(FORK, ("read(3, 0x7ffc0000, 64)", RESTARTED), _sigchld(31236, 0),
                                   ('read(3, "PING", 64)', "4"), _reaped(31236, 0), EXIT))
    later = normalize(_lines(FORK, ('read(3, "PING", 64)', "4"), _reaped(31236, 0),
                             _sigchld(31236, 0), EXIT))
    assert interrupted == later and not [line for line in later if "ERESTARTSYS" in line]
    # made again as another call, or an interrupted call without the signal: still seen
    other = normalize(_lines(FORK, ("read(3, 0x7ffc0000, 64)", RESTARTED), _sigchld(31236, 0),
                             ('read(4, "PING", 64)', "4"), _reaped(31236, 0), EXIT))
    assert len([line for line in other if "ERESTARTSYS" in line]) == 1
    alone = normalize(_lines(FORK, ("read(3, 0x7ffc0000, 64)", RESTARTED),
                             ('read(3, "PING", 64)', "4"), _reaped(31236, 0), _sigchld(31236, 0),
                             EXIT))
    assert alone != later


PIPE = ("pipe([3, 4])", "0")


def _reads(*pieces: bytes, fd: int = 3, opened: tuple[str, str] = PIPE) -> list[str]:
    return normalize(_lines(opened, ("close(4)", "0"),
                            *((f'read({fd}, {quote(piece)}, 256)', str(len(piece)))
                              for piece in pieces),
                            (f'read({fd}, "", 256)', "0"), EXIT))


def test_a_pipe_s_bytes_read_in_one_read_or_several_are_the_same_stream():
    one = _reads(b"line 1\nline 2\nline 3\n")
    assert one == _reads(b"line 1\n", b"line 2\n", b"line 3\n") == \
        _reads(b"line 1\nli", b"ne 2\nline 3\n")
    assert one[2] == 'read(3, "line 1\\nline 2\\nline 3\\n", 256) = 21'
    # a byte that differs, a line more or fewer, a failed read: still seen
    assert _reads(b"line 1\n", b"line 2\n", b"line 4\n") != one
    assert _reads(b"line 1\n", b"line 2\n") != one
    assert normalize(_lines(("pipe([3, 4])", "0"), ('read(3, "line 1\\n", 256)', "7"),
                            ("read(3, 0x7ffc0000, 256)",
                             "-1 EAGAIN (Resource temporarily unavailable)"),
                            ('read(3, "line 2\\nline 3\\n", 256)', "14"), ('read(3, "", 256)', "0"),
                            EXIT)) != one


def test_only_a_pipe_s_reads_shown_whole_are_joined():
    """A file's short reads, or a socket's, are the kernel's (compared as they are); a read
    strace cut to 32 bytes has unknown bytes (compare with -s as large as the buffer)."""
    whole = b"line 1\nline 2\nline 3\n"
    opened = ('openat(AT_FDCWD, "lines", O_RDONLY)', "3")
    assert _reads(whole, opened=opened) != _reads(b"line 1\n", b"line 2\nline 3\n", opened=opened)
    pair = ("socketpair(AF_UNIX, SOCK_STREAM, 0, [3, 4])", "0")
    assert _reads(whole, opened=pair) != _reads(b"line 1\n", b"line 2\nline 3\n", opened=pair)
    long = bytes(range(48, 48 + 40))
    cut = normalize(_lines(("pipe([3, 4])", "0"), (f"read(3, {quote(long[:32], True)}, 256)", "40"),
                           ('read(3, "x", 256)', "1"), EXIT))
    assert len([line for line in cut if line.startswith("read(")]) == 2


def _pipeline(child_s_first_call: str) -> list[str]:
    return normalize(_trace((10, "pipe2([3, 4], 0)", "0"), (10, "fork()", "11"),
                            (10, "close(3)", "0"), (11, child_s_first_call, "0"),
                            (11, "close(3)", "0"),
                            (11, 'execve("/bin/cat", ["cat"], 0x7ffc0000 /* 4 vars */)', "0"),
                            (11, 'read(0, "a\\n", 65536)', "2"),
                            (11, 'read(0, "b\\n", 65536)', "2"),
                            (11, 'read(0, "", 65536)', "0")))


def test_a_pipe_is_followed_to_the_child_that_inherits_it_and_through_dup2():
    """sh's pipeline: the child dup2s the read end to 0 and execs cat, which reads 0."""
    assert 'P1 read(0, "a\\nb\\n", 65536) = 4' in _pipeline("dup2(3, 0)")
    assert 'P1 read(0, "a\\n", 65536) = 2' in _pipeline("close(0)")     # 0 is no pipe then


@given(st.binary(min_size=2, max_size=600), st.data())
def test_any_cut_of_a_pipe_s_bytes_into_reads_is_one_stream(data, draw):
    """Whatever reads take a pipe's bytes (strace's escapes across the cuts included: a NUL
    before a digit is \\000 within a string, \\0 at its end), the comparison sees one stream,
    and a byte changed anywhere still shows."""
    cuts = sorted(draw.draw(st.sets(st.integers(1, len(data) - 1), min_size=1, max_size=20)))
    pieces = [data[start:end] for start, end in zip([0, *cuts], [*cuts, len(data)])]
    assert len(pieces) >= 2                                     # several reads, one stream
    assert _reads(*pieces) == _reads(data)
    at = draw.draw(st.integers(0, len(data) - 1))
    changed = data[:at] + bytes([data[at] ^ 0x01]) + data[at + 1:]
    assert _reads(*pieces) != _reads(changed)


def test_a_read_whose_string_is_not_strace_s_quoting_is_not_joined():
    """An unknown escape, or a character strace escapes, in a pipe's read: compared as it is."""
    def lines(first: str) -> list[str]:
        return normalize(_lines(PIPE, (f'read(3, "{first}", 256)', "2"),
                                ('read(3, "b\\n", 256)', "2"), EXIT))
    assert len([line for line in lines("a\\n") if line.startswith("read(")]) == 1
    assert len([line for line in lines("a\\q") if line.startswith("read(")]) == 2
    assert len([line for line in lines("\u00e9\\n") if line.startswith("read(")]) == 2
