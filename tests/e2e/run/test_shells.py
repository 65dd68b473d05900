"""Shell scripts that fork, exec, pipe, wait and signal behave in the sandbox as natively.

Every script runs under busybox ``sh`` and under ``bash`` (Debian's static builds), on
both arches, once in the sandbox and once natively chrooted into the same rootfs
(sandbox_runner.py); stdout, exit status and stderr must be identical. Each script
exercises the process model through a shell: pipelines (pipe + fork + dup2 + execve),
subshells and command substitution (fork + wait4), background jobs and ``wait``,
nested shells (execve of /bin/sh from a child), signals with traps, and here-documents.

``sleep 1`` finishes at once in wall time: the sandbox's clock is virtual (docs/ARCHITECTURE.md,
"Time and randomness are virtual"), which is intended; only its result is compared.

One native quirk matters here: the native launcher is a Python process, and Python sets
SIGPIPE to SIG_IGN at start-up; an ignored disposition survives execve (signal(7)) and a
non-interactive shell may not reset a signal that was ignored on entry (POSIX, trap).
Natively, ``yes | head`` therefore ends with ``yes`` failing with EPIPE and printing an
error, while in the sandbox (every signal starts at SIG_DFL, as under a login shell) it
dies of SIGPIPE silently. Cases whose writer outlives its reader thus ignore SIGPIPE
explicitly (``trap '' PIPE``), which both sides then honour identically, and the default
behaviour is checked against Linux's documented result (status 128 + SIGPIPE) instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import pytest

from tests.e2e.debian_bins import ARCHES
from tests.e2e.sandbox_options import run_sandbox_with_options
from tests.e2e.sandbox_runner import (
    FIXED_ENV,
    assert_same_behaviour,
    check_native_oracle,
    compare_results,
    failure_report,
    run_native,
    run_sandbox,
)
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e

SHELLS = {"busybox-sh": "/bin/sh", "bash": "/bin/bash"}
SIGPIPE = 13
STRACE_LINE = re.compile(rb"^(\[pid +\d+\] )?[a-z_0-9]+\(.*\) += ", re.MULTILINE)


@dataclass(frozen=True)
class Script:
    id: str
    text: str
    status: int = 0
    # Only for shells that have the syntax (``set -o pipefail`` is in both; PIPESTATUS
    # and ``${x^^}`` only in bash).
    shells: tuple[str, ...] = tuple(SHELLS)
    compare_stderr: bool = True


SCRIPTS = (
    Script("pipe-tr", "echo a | tr a b"),
    Script("loop-into-wc", "for i in 1 2 3; do echo $i; done | wc -l"),
    Script("subshell-exit-status", "(exit 7); echo $?"),
    Script("command-substitution", "x=$(echo hi); echo $x; y=`echo a b | wc -w`; echo $y"),
    Script("yes-head-sigpipe-ignored", "trap '' PIPE; yes | head -n 3; echo $?"),
    # Without the trap the native yes gets EPIPE (module docstring); stdout and status of
    # the pipeline are still the same, its stderr is not.
    Script("yes-head", "yes | head -n 3", compare_stderr=False),
    Script("sleep-background-wait", "sleep 1 & wait; echo done"),
    Script("seq-xargs", "seq 10 | xargs -n 3 echo"),
    Script("nested-sh", "sh -c 'sh -c \"echo nested; exit 4\"'; echo $?"),
    Script("nested-sh-status", "sh -c 'exit 12'", status=12),
    Script("tar-gzip-pipeline",
           "tar -cf - -C /work tree | gzip -c | gzip -dc | tar -tf - | sort"),
    Script("tar-cz-xz-roundtrip",
           "tar -czf - -C /work tree | tar -xzOf - tree/sub/c.txt | wc -lc"),
    Script("heredoc", "cat <<EOF\nline one\n$((2 + 3)) is five\nEOF\ncat <<'RAW'\n$HOME\nRAW"),
    Script("heredoc-into-pipeline", "tr a-z A-Z <<EOF | sort -r\nfirst\nsecond\nEOF"),
    Script("last-command-decides", "false | true; echo $?; true | false; echo $?"),
    Script("pipefail",
           "set -o pipefail; false | true; echo $?; true | (exit 6) | true; echo $?"),
    Script("pipestatus", "true | (exit 3) | false; echo ${PIPESTATUS[@]}", shells=("bash",)),
    Script("trap-term-self",
           "trap 'echo got TERM; exit 9' TERM; kill -TERM $$; echo not reached", status=9),
    Script("kill-background-job", "sleep 5 & p=$!; kill -TERM $p; wait $p; echo $?"),
    Script("wait-distinct-statuses",
           "(exit 3) & p=$!; (exit 5) & q=$!; (exit 0) & r=$!; (exit 255) & s=$!\n"
           "wait $q; echo $?; wait $p; echo $?; wait $s; echo $?; wait $r; echo $?"),
    Script("wait-all-then-status", "(exit 1) & (exit 2) & wait; echo all $?"),
    Script("exit-status-of-script", "(exit 3) & wait $!", status=3),
)


def _shell_params():
    for script in SCRIPTS:
        for shell in script.shells:
            yield pytest.param(shell, script, id=f"{shell}-{script.id}")


@pytest.mark.parametrize(("shell", "script"), list(_shell_params()))
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_shell_script_matches_native(arch, shell, script, rootfs_for, native_arch):
    argv = [SHELLS[shell], "-c", script.text]
    native = run_native(argv, rootfs_dir=rootfs_for(native_arch[arch]), env=FIXED_ENV)
    check_native_oracle(native, script.status)
    sandbox = run_sandbox(argv, rootfs=rootfs_for(arch), env=FIXED_ENV, clear_env=True)
    assert_same_behaviour(sandbox, native, stderr=script.compare_stderr)


REDIRECTIONS = "echo x > /tmp/f; cat /tmp/f; echo y >> /tmp/f; wc -l < /tmp/f; cat /tmp/f 2>&1 >&-"


@pytest.mark.parametrize("shell", sorted(SHELLS))
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_file_redirections(arch, shell, fresh_rootfs, native_arch):
    """>, >>, < and fd duplication; each side writes into its own copy of the rootfs."""
    native_root = fresh_rootfs(native_arch[arch], "native-root")
    sandbox_root = fresh_rootfs(arch, "sandbox-root")
    argv = [SHELLS[shell], "-c", REDIRECTIONS]
    native = run_native(argv, rootfs_dir=native_root, env=FIXED_ENV)
    check_native_oracle(native, 1)  # the last cat writes to a closed stdout
    sandbox = run_sandbox(argv, rootfs=sandbox_root, env=FIXED_ENV, clear_env=True)
    assert_same_behaviour(sandbox, native)
    assert (native_root / "tmp" / "f").read_text() == "x\ny\n"
    # Without --writable the guest's writes stay in the overlay, off the host folder.
    assert list((sandbox_root / "tmp").iterdir()) == []


# A writer whose reader has exited is killed by SIGPIPE (pipe(7)): the shell reports
# 128 + 13. Natively the launcher ignores SIGPIPE (module docstring), so the expected
# result is Linux's documented one rather than a native run.
DEFAULT_SIGPIPE = {
    "busybox-sh": "set -o pipefail; yes | head -n 1 >/dev/null; echo $?",
    "bash": "yes | head -n 1 >/dev/null; echo ${PIPESTATUS[@]}",
}
DEFAULT_SIGPIPE_OUTPUT = {
    "busybox-sh": b"%d\n" % (128 + SIGPIPE),
    "bash": b"%d 0\n" % (128 + SIGPIPE),
}


@pytest.mark.parametrize("shell", sorted(SHELLS))
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_default_sigpipe_kills_the_writer(arch, shell, rootfs_for):
    sandbox = run_sandbox([SHELLS[shell], "-c", DEFAULT_SIGPIPE[shell]], rootfs=rootfs_for(arch),
                          env=FIXED_ENV, clear_env=True)
    assert (sandbox.returncode, sandbox.stdout, sandbox.stderr) == (
        0, DEFAULT_SIGPIPE_OUTPUT[shell], b""), sandbox.describe()


DETERMINISM_SCRIPT = (
    "seq 20 | xargs -n 4 echo | tr ' ' + | sort -r; (exit 3) & p=$!; "
    "x=$(echo sub); sleep 1 & wait $p; echo $? $x; wait"
)


@pytest.mark.parametrize("follow_forks", [False, True], ids=["strace", "strace-f"])
@pytest.mark.parametrize("shell", sorted(SHELLS))
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_pipeline_runs_are_byte_identical_with_strace(arch, shell, follow_forks, rootfs_for):
    """docs/ARCHITECTURE.md's determinism contract across fork, exec, pipes and the scheduler."""
    argv = [SHELLS[shell], "-c", DETERMINISM_SCRIPT]
    options = ["--strace", "-f"] if follow_forks else ["--strace"]
    first, second = (
        run_sandbox_with_options(argv, options, rootfs=rootfs_for(arch), env=FIXED_ENV)
        for _ in range(2)
    )
    assert first.returncode == 0, f"the run itself failed:\n{first.describe()}"
    assert first.stdout.endswith(b"3 sub\n"), first.describe()
    problems = compare_results(second, first)
    assert not problems, "two identical runs differ (first run shown as 'native'):\n" + (
        failure_report(second, first, problems)
    )
    assert STRACE_LINE.search(first.stderr), first.describe()
    # The shell's own forks and reaps show in either mode; with -f, so do its children
    # (pipeline members, subshells, sleep), each line tagged [pid N].
    for call in (rb"clone\(", rb"wait4\(", rb"--- SIGCHLD "):
        assert re.search(rb"^(\[pid +\d+\] )?" + call, first.stderr, re.MULTILINE), (
            f"--strace shows no {call!r} of the shell:\n{first.describe()}"
        )
    tagged_pids = set(re.findall(rb"^\[pid +(\d+)\]", first.stderr, re.MULTILINE))
    assert (len(tagged_pids) >= 5) == follow_forks, (
        f"processes tagged in the trace: {sorted(tagged_pids)}\n{first.describe()}"
    )
