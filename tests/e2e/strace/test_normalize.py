"""compare.py's normalization of -f traces: processes labeled by the process tree, whichever
of them the host ran first (a child's own clone printed before its parent's clone returned)."""
from tests.e2e.strace.compare import normalize
from trapline.strace.output import aligned


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
