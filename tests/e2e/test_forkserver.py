"""The fork server's runs (forkserver.py) are the subprocess's: the same stdout, stderr and exit
status, byte for byte, for a run that prints, one that computes, a guest that fails (status and
message), a guest killed by a signal, trapline's own errors (a missing program, click's usage
error) and a run with stdin, on both arches; and a run leaves nothing behind for the next."""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.e2e.debian_bins import ARCHES
from tests.e2e.forkserver import REPO_ROOT, ForkServer, run_trapline
from tests.e2e.rootfs_variants import SAMPLE_ARCH

SERVER = ForkServer()


def _cases(arch: str, busybox: str) -> dict[str, tuple[list[str], bytes]]:
    sample = f"samples/bin/{SAMPLE_ARCH[arch]}"
    return {
        "hello": (["run", f"{sample}/hello"], b""),
        "fib": (["run", f"{sample}/fib"], b""),
        "args": (["run", "--clear-env", "-E", "A=1", "--", f"{sample}/args_env", "x", "--y"], b""),
        "guest fails": (["run", busybox, "cat", "/no/such/file"], b""),
        "files": (["run", "--cwd", "/tmp", f"{sample}/fileio"], b""),
        "guest killed": (["run", busybox, "sh", "-c", "echo before; kill -TERM $$; echo after"], b""),
        "stdin": (["run", busybox, "sh", "-c", "read a b; echo $b $a; cat"], b"one two\nrest\n"),
        "strace": (["run", "--strace", f"{sample}/hello"], b""),
        "missing program": (["run", "/no/such/program"], b""),
        "usage error": (["run", "--no-such-option", f"{sample}/hello"], b""),
    }


def _subprocess_run(args: list[str], stdin: bytes) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "trapline", *args], input=stdin,
                          capture_output=True, timeout=120, cwd=REPO_ROOT)


@pytest.mark.parametrize("arch", ARCHES)
def test_fork_gives_the_subprocess_output_and_status(arch, debian_bins):
    cases = _cases(arch, str(debian_bins[arch]["busybox"]))
    statuses = set()
    for name, (args, stdin) in cases.items():
        forked = SERVER.run(args, stdin=stdin, timeout=120, cwd=REPO_ROOT, env=dict(os.environ))
        started = _subprocess_run(args, stdin)
        assert (forked.returncode, forked.stdout, forked.stderr) == \
            (started.returncode, started.stdout, started.stderr), name
        statuses.add(started.returncode)
    # The interesting ends were reached: success, a guest's failure, death by SIGTERM (128+15),
    # trapline's usage error (click: 2), a program not found (127).
    assert {0, 1, 143, 2, 127} <= statuses, statuses


@pytest.mark.parametrize("arch", ARCHES)
def test_a_run_leaves_nothing_for_the_next(arch):
    # The same run three times, with another run between: each child starts from the server's
    # state after imports, so the first and the last are the same bytes.
    args = ["run", "--strace", f"samples/bin/{SAMPLE_ARCH[arch]}/fib"]
    first = SERVER.run(args, stdin=b"", timeout=120, cwd=REPO_ROOT, env=dict(os.environ))
    SERVER.run(["run", f"samples/bin/{SAMPLE_ARCH[arch]}/threads"], stdin=b"", timeout=120, cwd=REPO_ROOT,
               env=dict(os.environ))
    last = SERVER.run(args, stdin=b"", timeout=120, cwd=REPO_ROOT, env=dict(os.environ))
    assert first.returncode == 0 and first.stderr
    assert (last.returncode, last.stdout, last.stderr) == \
        (first.returncode, first.stdout, first.stderr)


def test_a_run_past_its_timeout_is_killed_with_what_it_wrote():
    endless = ["run", "samples/bin/x86_64/compute", "1000000000"]
    with pytest.raises(subprocess.TimeoutExpired) as raised:
        SERVER.run(endless, stdin=b"", timeout=1, cwd=REPO_ROOT, env=dict(os.environ))
    assert raised.value.timeout == 1
    # The server serves the next run after the killed one.
    after = SERVER.run(["run", "samples/bin/x86_64/hello"], stdin=b"", timeout=120, cwd=REPO_ROOT,
                       env=dict(os.environ))
    assert after.stdout == b"hello, world\n"


def test_python_variables_other_than_the_servers_go_to_a_subprocess():
    assert SERVER.serves(dict(os.environ))
    assert not SERVER.serves({**os.environ, "PYTHONHASHSEED": "12345"})


def test_another_folder_forks_only_where_this_checkout_is_on_the_path(tmp_path):
    # From another folder `python -m trapline` imports the installed trapline, unless
    # PYTHONPATH names this checkout (lang_run.py and the handlers' tests set it so); a folder
    # with a package of the checkout's name would shadow it.
    this_checkout = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    assert SERVER.serves(this_checkout, REPO_ROOT)
    assert SERVER.serves(this_checkout, tmp_path)
    assert not SERVER.serves({k: v for k, v in os.environ.items() if k != "PYTHONPATH"}, tmp_path)
    (tmp_path / "shadow" / "trapline").mkdir(parents=True)
    assert not SERVER.serves(this_checkout, tmp_path / "shadow")


@pytest.mark.parametrize("arch", ARCHES)
def test_a_run_from_another_folder_in_text_mode_is_the_subprocess_run(arch, tmp_path):
    # The working folder is the child's (a relative -o lands there), and text mode decodes as
    # subprocess's does (the report's box-drawing characters, the newlines).
    sample = REPO_ROOT / "samples" / "bin" / SAMPLE_ARCH[arch] / "callchain"
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    args = ["profile", "--interval", "3000", "-o", "out", str(sample), "12"]
    (tmp_path / "fork").mkdir()
    (tmp_path / "subprocess").mkdir()
    forked = run_trapline(args, timeout=120, cwd=tmp_path / "fork", env=env, text=True)
    started = subprocess.run([sys.executable, "-m", "trapline", *args], capture_output=True,
                             text=True, timeout=120, cwd=tmp_path / "subprocess", env=env)
    assert SERVER.serves(env, tmp_path / "fork")
    assert forked.returncode == started.returncode == 0, forked.stderr
    assert isinstance(forked.stdout, str) and forked.stdout == started.stdout
    assert forked.stderr == started.stderr and "━━━━" in forked.stderr
    folded = [folder / "out" / "profile.folded" for folder in (tmp_path / "fork", tmp_path / "subprocess")]
    assert folded[0].read_bytes() == folded[1].read_bytes() != b""


def test_a_run_interrupted_midway_leaves_a_working_server(monkeypatch):
    # KeyboardInterrupt in the caller while the child runs: the server's late "status" would
    # answer the next request's "pid" unless the interrupted server is replaced.
    import tests.e2e.forkserver as forkserver
    server = ForkServer()

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt
    with monkeypatch.context() as patch:
        patch.setattr(forkserver, "_communicate", interrupted)
        with pytest.raises(KeyboardInterrupt):
            server.run(["run", "samples/bin/i386/hello"], stdin=b"", timeout=120, cwd=REPO_ROOT,
                       env=dict(os.environ))
    after = server.run(["run", "samples/bin/i386/hello"], stdin=b"", timeout=120, cwd=REPO_ROOT,
                       env=dict(os.environ))
    assert (after.returncode, after.stdout) == (0, b"hello, world\n")
    server.close()
