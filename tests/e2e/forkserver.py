"""A warm `python -m trapline` for the e2e tests: one process per pytest worker imports trapline
once, then forks one child per run; the child is `python -m trapline ARGS` from the point where
the interpreter has finished starting up.

Why: a fresh `python -m trapline run` spends most of a short run's CPU before the guest's first instruction
(the interpreter, unicorn, the kernel model, click), and the e2e tests start hundreds of them.
A forked child skips that and nothing else: it is a separate process (its own signals, exit
status and death by a signal, its own pid), its stdin, stdout and stderr are pipes as
subprocess.run gives them (passed over a Unix socket, SCM_RIGHTS: unix(7)), it runs in the
caller's working folder and environment, and it starts from the server's state after imports,
never a previous run's (each run is a fresh fork, so no cache or global a run fills can leak
into the next one). The server itself never runs a guest.

What stays the subprocess's (sandbox_runner.py falls back to it): an environment whose PYTHON*
variables differ from the server's (the interpreter reads them at start-up), and everything a
test checks about trapline as a process being started (start-up, imports, PATH lookup, signals
sent to it): those tests start `python -m trapline` themselves. TRAPLINE_TESTS_SUBPROCESS=1
sends every run through the subprocess path, to compare. `run_trapline` is the helpers' call:
it forks from the server where it can and falls back to subprocess.run where the subprocess would
import another trapline than the server's: from a working folder other than the repository's,
`python -m trapline` imports the installed one, unless PYTHONPATH names this checkout (the
helpers that run trapline from a test's folder set it so).

The child ends as the interpreter ends a `python -m` run (Python/pythonrun.c
_Py_HandleSystemExit, Py_FinalizeEx): SystemExit's code as the status (None 0, an int itself,
anything else printed to stderr and 1), an uncaught exception through sys.excepthook and 1, an
uncaught KeyboardInterrupt as death by SIGINT (Modules/main.c exit_sigint); then non-daemon
threads are joined, atexit functions run, stdout and stderr are flushed (120 if that fails).
"""
from __future__ import annotations

import atexit
import json
import locale
import os
import selectors
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
SWITCH = "TRAPLINE_TESTS_SUBPROCESS"
_HEADER = struct.Struct("!I")
# The modules `trapline run` imports before its guest starts (entry.py pauses the collector
# first, as the console script does); the rest are imported by each child as a fresh run does.
_WARM_MODULES = ("trapline.entry", "trapline.plain_run", "trapline.sandbox", "trapline.cli")


# ----------------------------------------------------------------------------- client side


def run_trapline(args: list[str], *, input: bytes = b"", timeout: float,    # noqa: A002
                 cwd: Path = REPO_ROOT, env: dict[str, str] | None = None, text: bool = False
                 ) -> subprocess.CompletedProcess:
    """``subprocess.run([python, -m, trapline, *args], input=input, capture_output=True,
    timeout=timeout, cwd=cwd, env=env, text=text)``, forked from this process's server where it
    serves (module docstring): the same output, status and TimeoutExpired."""
    environment = dict(os.environ) if env is None else env
    if FORK_SERVER.serves(environment, cwd):
        done = FORK_SERVER.run(args, stdin=input, timeout=timeout, cwd=Path(cwd), env=environment)
    else:
        done = subprocess.run([sys.executable, "-m", "trapline", *args], input=input,
                              capture_output=True, timeout=timeout, cwd=cwd, env=env)
    if text:
        done.stdout, done.stderr = _as_text(done.stdout), _as_text(done.stderr)
    return done


def _as_text(data: bytes) -> str:
    # As subprocess's text mode decodes a finished child's output (Popen._translate_newlines):
    # the locale's encoding, strict, universal newlines.
    return data.decode(locale.getpreferredencoding(False)).replace("\r\n", "\n").replace("\r", "\n")


class ForkServer:
    """The client: starts the server on first use, runs ``python -m trapline ARGS`` in it."""

    def __init__(self) -> None:
        self._process: subprocess.Popen | None = None
        self._socket: socket.socket | None = None
        self._owner = 0
        self._environment: dict[str, str] = {}

    def serves(self, env: dict[str, str], cwd: Path = REPO_ROOT) -> bool:
        """Whether a run with this environment, in this working folder, can be a fork: it would
        import the server's trapline (_imports_this_checkout), and the PYTHON* variables, read
        at the interpreter's start-up, are the server's."""
        if os.environ.get(SWITCH) == "1" or not _imports_this_checkout(env, Path(cwd)):
            return False
        self._start()
        return _python_variables(env) == _python_variables(self._environment)

    def run(self, args: list[str], *, stdin: bytes, timeout: float, cwd: Path,
            env: dict[str, str]) -> subprocess.CompletedProcess:
        """As ``subprocess.run([python, -m, trapline, *args], input=stdin,
        capture_output=True, timeout=timeout, cwd=cwd, env=env)``."""
        self._start()
        ends = [os.pipe() for _ in range(3)]              # stdin, stdout, stderr
        child_ends = [ends[0][0], ends[1][1], ends[2][1]]
        request = json.dumps({"args": args, "cwd": str(cwd), "env": env}).encode()
        try:
            socket.send_fds(self._socket, [_HEADER.pack(len(request)) + request], child_ends)
        finally:
            for fd in child_ends:
                os.close(fd)
        pid = 0
        try:
            pid = _receive(self._socket)["pid"]
            stdout, stderr, timed_out = _communicate(ends[0][1], ends[1][0], ends[2][0], stdin,
                                                     time.monotonic() + timeout, pid)
            status = _receive(self._socket)["status"]
        except BaseException:
            # Interrupted between request and status (Ctrl-C in pytest, a server gone): the
            # conversation is out of step, so the next run gets a new server.
            if pid:
                _kill(pid)
            self._abandon()
            raise
        command = [sys.executable, "-m", "trapline", *args]
        if timed_out:
            raise subprocess.TimeoutExpired(command, timeout, stdout, stderr)
        return subprocess.CompletedProcess(command, os.waitstatus_to_exitcode(status),
                                           stdout, stderr)

    def _start(self) -> None:
        # A pytest-xdist worker or a forked test gets its own server: the socket is per process.
        if self._process is not None and self._owner == os.getpid():
            return
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._environment = dict(os.environ)
        self._process = subprocess.Popen(
            [sys.executable, "-m", "tests.e2e.forkserver", str(theirs.fileno())],
            pass_fds=[theirs.fileno()], cwd=REPO_ROOT, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL)
        theirs.close()
        self._socket, self._owner = ours, os.getpid()
        _receive(self._socket)                          # "ready": the imports are done
        atexit.register(self.close)

    def _abandon(self) -> None:
        if self._process is not None and self._owner == os.getpid():
            self._process.kill()
            self.close()

    def close(self) -> None:
        """End the server (it exits when its socket closes) and reap it, so that its CPU time
        counts in the caller's children's rusage."""
        if self._process is None or self._owner != os.getpid():
            return
        self._socket.close()
        self._process.wait()
        self._process = None


# One server per process that uses it (a pytest-xdist worker): started on first use.
FORK_SERVER = ForkServer()


# The checkout's top-level packages: a folder holding one of them would shadow the server's.
_PACKAGES = ("trapline", "instrumenter", "kernel_model", "emu", "loader", "bench", "tests")


def _imports_this_checkout(env: dict[str, str], cwd: Path) -> bool:
    """Whether `python -m trapline` started in `cwd` with `env` imports this checkout's
    packages, as the server (started in REPO_ROOT) does: `-m` puts the working folder first on
    sys.path (Python/pathconfig.c _PyPathConfig_ComputeSysPath0), then PYTHONPATH."""
    if cwd.resolve() == REPO_ROOT:
        return True
    return (env.get("PYTHONPATH") == str(REPO_ROOT)
            and not any((cwd / name).exists() for name in _PACKAGES))


def _python_variables(env: dict[str, str]) -> dict[str, str]:
    found = {k: v for k, v in env.items() if k.startswith("PYTHON")}
    if found.get("PYTHONPATH") == str(REPO_ROOT):
        del found["PYTHONPATH"]         # this checkout, on the server's path already (sys.path[0])
    return found


def _communicate(stdin_fd: int, stdout_fd: int, stderr_fd: int, data: bytes, deadline: float,
                 pid: int) -> tuple[bytes, bytes, bool]:
    """Write stdin, read stdout and stderr to their ends (subprocess's POSIX communicate);
    at the deadline kill the child and collect what it wrote."""
    chunks = {stdout_fd: [], stderr_fd: []}
    timed_out = False
    with selectors.DefaultSelector() as selector:
        if data:
            os.set_blocking(stdin_fd, False)
            selector.register(stdin_fd, selectors.EVENT_WRITE)
        else:
            os.close(stdin_fd)
        for fd in chunks:
            selector.register(fd, selectors.EVENT_READ)
        offset = 0
        while selector.get_map():
            left = deadline - time.monotonic()
            if left <= 0 and not timed_out:
                timed_out = True
                _kill(pid)
            for key, _ in selector.select(None if timed_out else left):
                fd = key.fd
                if fd == stdin_fd:
                    try:
                        offset += os.write(fd, data[offset:offset + 65536])
                    except BrokenPipeError:
                        offset = len(data)
                    if offset >= len(data):
                        selector.unregister(fd)
                        os.close(fd)
                    continue
                chunk = os.read(fd, 65536)
                if chunk:
                    chunks[fd].append(chunk)
                else:
                    selector.unregister(fd)
                    os.close(fd)
    return b"".join(chunks[stdout_fd]), b"".join(chunks[stderr_fd]), timed_out


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _receive(sock: socket.socket) -> dict:
    header = _exactly(sock, _HEADER.size)
    return json.loads(_exactly(sock, _HEADER.unpack(header)[0]))


def _exactly(sock: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = sock.recv(size - len(data))
        if not chunk:
            raise ConnectionError("the trapline fork server went away")
        data += chunk
    return data


def _send(sock: socket.socket, message: dict) -> None:
    payload = json.dumps(message).encode()
    sock.sendall(_HEADER.pack(len(payload)) + payload)


# ----------------------------------------------------------------------------- server side


def serve(sock: socket.socket) -> None:
    """Import trapline, say ready, then one fork per request until the socket closes."""
    import importlib
    for name in _WARM_MODULES:
        importlib.import_module(name)
    _send(sock, {"ready": True})
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(sock, _HEADER.size, 3)
        except ConnectionError:
            return
        if not message:
            return
        request = json.loads(_exactly(sock, _HEADER.unpack(message)[0]))
        pid = os.fork()
        if pid == 0:
            _child(request, fds)                         # never returns
        for fd in fds:
            os.close(fd)
        try:
            _send(sock, {"pid": pid})
            _, status = os.waitpid(pid, 0)
            _send(sock, {"status": status})
        except OSError:                                  # the client went away mid-run
            return


def _child(request: dict, fds: list[int]) -> None:
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))          # the socket and the passed ends
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = ["-m", *request["args"]]                  # runpy sets argv[0] as -m does
    os._exit(_run_as_main())


def _run_as_main() -> int:
    import runpy
    try:
        runpy.run_module("trapline", run_name="__main__", alter_sys=True)
        status = 0
    except SystemExit as exit_:
        status = _system_exit_status(exit_.code)
    except KeyboardInterrupt:
        _finish()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
        status = 130
    except BaseException:                                # noqa: BLE001 -- the interpreter's own end
        sys.excepthook(*sys.exc_info())
        status = 1
    return _finish() or status


def _system_exit_status(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _finish() -> int:
    """Py_FinalizeEx's steps a run can see: threads joined, atexit, stdio flushed."""
    threading._shutdown()
    atexit._run_exitfuncs()
    failed = 0
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            failed = 120
    return failed


if __name__ == "__main__":
    serve(socket.socket(fileno=int(sys.argv[1])))
