"""Debian's strace and `trapline run --strace` on the same program in the same root, line by line.

The native side runs Debian's strace (installed by .ci/run or host_tools.py) on the host; the traced process is
the native launcher of sandbox_runner.py, which enters the rootfs (chroot, mount namespace) and
execs the program, so strace's lines from the program's own `execve` on are the program's, seen
exactly as a shell-started `strace PROG` would see them. The sandbox side is `python -m trapline
run --strace -o FILE` with the same environment.

Both texts are normalized only for what legitimately differs between two runs, each a thing
native strace itself varies on from run to run: addresses (hex of 5+ digits), pids (in the
places strace prints them), random bytes (getrandom's buffer), clock readings (tv_sec/tv_nsec
results, a child's CPU times in its SIGCHLD's si_utime/si_stime) and the inode numbers of pipes
and sockets (-y); the interleaving of processes (strace -f: each process's lines are compared
in its own order); and two effects of the host's timing around a child's exit and a pipe's
writes: where the parent takes an exited child's ignored SIGCHLD (and whether it interrupted
a call, made again: sigchld_order.py) and how many reads took a pipe's bytes (pipe_reads.py).
What is left must be identical; `identical_share` measures how much is.

`python3 -m tests.e2e.strace.compare [--diff] [--dynamic]` prints the share of identical lines
of every program (with --dynamic, also of DYNAMIC_PROGRAMS in the Debian rootfs).
"""
from __future__ import annotations

import difflib
import json
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.e2e.sandbox_runner import _NATIVE_LAUNCHER, FIXED_ENV, REPO_ROOT
from tests.e2e.forkserver import run_trapline
from tests.e2e.host_tools import ensure_strace
from tests.e2e.strace import pipe_reads, sigchld_order
from kernel_model.syscalls.impls.utsname import UtsName

# Debian's strace (.ci/run installs it, or the first comparison does: ../host_tools.py).
SAMPLES = REPO_ROOT / "samples" / "bin"
SAMPLE_ARCH = {"amd64": "x86_64", "i386": "i386"}

# Samples that end on their own within seconds, with nothing of the host's in their output.
SAMPLE_PROGRAMS = {
    "hello": [], "args_env": ["first", "second arg"], "fileio": [], "compute": [],
    "fib": ["10"], "alloc": [], "callchain": [], "signals": [], "sigchain": [],
    "fork_pipe": [], "exec_chain": [], "vfork_status": [], "spawn_tree": [], "sockets": [],
    "sysv_ipc": [],
}
FOLLOWED_SAMPLES = ("fork_pipe", "exec_chain", "vfork_status", "spawn_tree", "sockets")
# strace options of a sample's comparison, given to both sides. fork_pipe's reader reads up to
# 256 bytes at a time, and when its writer ran ahead (the host's timing) a read takes several
# lines, more than strace's 32 bytes shown: all of each read must be shown to join them
# (pipe_reads.py).
SAMPLE_OPTIONS = {"fork_pipe": ("-s", "256")}
# Busybox applets (single processes) and sh pipelines (followed with -f).
BUSYBOX_PROGRAMS = {
    "echo": (["/bin/busybox", "echo", "hi"], False),
    "cat": (["/bin/busybox", "cat", "/etc/passwd"], False),
    "ls": (["/bin/busybox", "ls", "/"], False),
    "sha256sum": (["/bin/busybox", "sha256sum", "/etc/passwd"], False),
    "true": (["/bin/busybox", "true"], False),
    "false": (["/bin/busybox", "false"], False),
    "sh-pipe": (["/bin/busybox", "sh", "-c", "echo a | cat"], True),
}

# Dynamically linked programs of the Debian rootfs (ld.so, libc): single processes.
DYNAMIC_PROGRAMS = {"dyn-true": ["/usr/bin/true"], "dyn-ls": ["/usr/bin/ls", "/"],
                    "dyn-cat": ["/usr/bin/cat", "/etc/passwd"]}

# The native launcher, in its own UTS namespace named as the sandbox's machine (utsname.py's
# nodename): uname's nodename is the host's configuration, like its pids, and a rootfs run sets it
# (the user namespace the launcher enters gives it CAP_SYS_ADMIN over a new UTS namespace).
_CLONE_NEWUTS = 0x04000000
NODENAME = UtsName().nodename
_LAUNCHER = _NATIVE_LAUNCHER.replace(
    "os.chroot(root)\n",
    f"check(libc.unshare({_CLONE_NEWUTS}), 'unshare(CLONE_NEWUTS)')\n"
    f"check(libc.sethostname({NODENAME!r}, {len(NODENAME)}), 'sethostname')\n"
    "os.chroot(root)\n", 1)
assert _LAUNCHER != _NATIVE_LAUNCHER
# The root and /dev as the sandbox models them (kernel_model/fs/mountinfo.py, devfs.py): the
# rootfs is a mount of its own, so its root is a mount root (statx's STATX_ATTR_MOUNT_ROOT);
# /dev is a devtmpfs holding the sandbox's devices, links and shm only (the host's /dev has its
# own number of entries, which is a tmpfs directory's size), each device bound from the host's.
_MODELED_DEV = r"""
check(libc.mount(root.encode(), root.encode(), None, MS_BIND | MS_REC, None), 'bind the root')
dev = os.path.join(root, 'dev')
check(libc.mount(b'devtmpfs', dev.encode(), b'tmpfs', 0, b'mode=755'), 'mount /dev')
for name in ('null', 'zero', 'random', 'urandom', 'tty', 'ptmx', 'userfaultfd'):
    open(os.path.join(dev, name), 'w').close()
    if os.path.exists(f'/dev/{name}'):      # (a host without /dev/userfaultfd: the name alone)
        check(libc.mount(f'/dev/{name}'.encode(), os.path.join(dev, name).encode(), None,
                         MS_BIND, None), f'bind /dev/{name}')
for name, target in (('fd', '/proc/self/fd'), ('stdin', '/proc/self/fd/0'),
                     ('stdout', '/proc/self/fd/1'), ('stderr', '/proc/self/fd/2')):
    os.symlink(target, os.path.join(dev, name))
os.mkdir(os.path.join(dev, 'pts'))
check(libc.mount(b'devpts', os.path.join(dev, 'pts').encode(), b'devpts', 0,
                 b'newinstance,mode=600,ptmxmode=000'), 'devpts')
os.mkdir(os.path.join(dev, 'shm'))
check(libc.mount(b'tmpfs', os.path.join(dev, 'shm').encode(), b'tmpfs', 0, b'mode=1777'), 'shm')
"""
_LAUNCHER = _LAUNCHER.replace("os.chroot(root)\n", _MODELED_DEV.lstrip("\n") + "os.chroot(root)\n", 1)

# The native side on the sandbox's machine: one CPU (the sandbox models CPU 0 alone: the
# affinity mask glibc reads, sched_getaffinity's [0] = 8), no address randomization (the
# sandbox places mappings as Linux does with it off, so an allocator's alignment trimming
# munmaps the same pieces: setarch -R, personality ADDR_NO_RANDOMIZE, inherited by the program)
# and an IPC namespace of its own, as the sandbox's kernel has: System V ids are allocated from
# a fresh table (ipc/util.c ipc_idr_alloc, 0 first), untouched by the host's other programs.
SANDBOX_LIKE = ("unshare", "--ipc", "setarch", "-R", "taskset", "-c", "0")

_ADDRESS = re.compile(r"0x[0-9a-f]{5,}")
_PREFIX = re.compile(r"^(?:(\d+) +|\[pid +(\d+)\] )")
_PID_PLACES = [
    re.compile(r"(si_pid=)\d+()"),
    re.compile(r"(cmsg_data=\{pid=)\d+()"),
    re.compile(r"(Process PID=)\d+()"),
    re.compile(r"\b((?:msg_ls|msg_lr|shm_c|shm_l)pid=)[1-9]\d*()"),   # (0: none yet, stays)
    re.compile(r"^((?:getpid|gettid|getppid|set_tid_address|fork|vfork|clone|clone3|wait4|"
               r"waitpid|setsid|getsid|getpgid|getpgrp)\(.*\) = )\d+()"),
    re.compile(r"^((?:wait4|waitpid|kill|tgkill|tkill)\()\d+()"),
    re.compile(r"^(tgkill\(PID, )\d+()"),
]
_RANDOM = re.compile(r'^(getrandom\()"(?:[^"\\]|\\.)*"(?:\.\.\.)?')
_CLOCK = re.compile(r"(tv_sec=)\d+(, tv_nsec=)\d+")
# A child's CPU times in its SIGCHLD's siginfo (si_utime=0, si_stime=1 /* 0.01 s */): clock
# ticks the host counted, as tv_sec is a clock reading.
_CPU_TIMES = re.compile(r"(si_[us]time=)\d+(?: /\* [^*]* \*/)?")
# The System V IPC structures' times (msgctl's, semctl's, shmctl's IPC_STAT): clock readings in
# seconds; 0 (never) stays, as it is the same on both sides.
_IPC_TIMES = re.compile(r"\b((?:msg_[src]|sem_[oc]|shm_[adc])time=)[1-9]\d*")
# -y/-yy: the inode numbers of pipes and sockets (pipe:[4101], UNIX-STREAM:[4097->4098])
_INODES = re.compile(r"((?:pipe|socket|UNIX|UNIX-STREAM|TCP|TCPv6|UDP|UDPv6):\[)\d+(?:->\d+)?")
_RESULT = re.compile(r"^(.*\)) +(= .*)$")
ALIGN_COLUMN = 40            # strace -a default: `= ` starts at column 40


def _collapse_alignment(prefix: str, body: str) -> str:
    """`head) <pad>= ret` -> `head) = ret` when the padding is strace's (the `= ` at column 40
    counting the pid prefix, or one space past it); a wrong padding stays visible."""
    match = _RESULT.match(body)
    if match is None:
        return body
    head, result = match.groups()
    width = len(prefix) + len(head) + 1
    padding = len(body) - len(head) - len(result)
    right = padding == 1 if width >= ALIGN_COLUMN else width + padding - 1 == ALIGN_COLUMN
    return f"{head} {result}" if right else f"{head} <padding {padding}> {result}"


def _split_prefix(line: str) -> tuple[str | None, str, str]:
    match = _PREFIX.match(line)
    if match is None:
        return None, "", line
    return match.group(1) or match.group(2), match.group(0), line[match.end():]


def _normalize_body(body: str) -> str:
    body = _ADDRESS.sub("ADDR", body)
    for place in _PID_PLACES:
        body = place.sub(r"\1PID\2", body)
    body = _RANDOM.sub(r'\1"RANDOM"', body)
    body = _INODES.sub(r"\1INODE", body)
    body = _CPU_TIMES.sub(r"\1T", body)
    body = _IPC_TIMES.sub(r"\1T", body)
    return _CLOCK.sub(r"\1T\2T", body)


_UNFINISHED = " <unfinished ...>"
_RESUMED = re.compile(r"^<\.\.\. [a-z_0-9]+ resumed>")


def normalize(text: str, *, as_run: bool = False) -> list[str]:
    """One list of lines per trace. Lines of several processes (strace -f) are regrouped per
    process, in the order each first appears, and a call split by a switch to another process
    (`<unfinished ...>` ... `<... NAME resumed>`) is joined into one line: the interleaving
    of processes is the host scheduler's, which no two native runs share either. Unless
    `as_run`, where each process takes an exited child's SIGCHLD and how many reads take a
    pipe's bytes, which are the host's timing too, are evened out (sigchld_order.py,
    pipe_reads.py); `as_run` keeps the lines of each process in the order they came."""
    processes, unfinished = _bodies_per_process(text)
    first = _split_prefix(text.splitlines()[0])[0] if text.strip() else None
    order = _creation_order(text, first)
    if not as_run:
        _even_out_timing(processes, order, sigchld_order.handles_sigchld(text))
    pids = _pids_of(text)
    normalized = {pid: [_restored_pid(_normalize_body(body), pids) for body in bodies]
                  for pid, bodies in processes.items()}
    for pid, body in unfinished.items():
        normalized.setdefault(pid, []).append(_normalize_body(body + _UNFINISHED))
    if len(normalized) == 1:
        return next(iter(normalized.values()))
    ranked = sorted(normalized, key=lambda pid: order.get(pid, len(order)))
    return [f"P{index} {line}" for index, pid in enumerate(ranked) for line in normalized[pid]]


def _bodies_per_process(text: str) -> tuple[dict, dict]:
    """Each process's lines as strace wrote them, split calls joined and strace's alignment
    checked (a wrong padding stays visible); and the calls left unfinished."""
    processes: dict[str | None, list[str]] = {}
    pending: dict[str | None, str] = {}
    for line in text.splitlines():
        pid, prefix, body = _split_prefix(line)
        if body.endswith(_UNFINISHED):
            pending[pid] = body[:-len(_UNFINISHED)]
            continue
        resumed = _RESUMED.match(body)
        if resumed is not None and pid in pending:
            body = pending.pop(pid) + body[resumed.end():]
            body = re.sub(r"\) += ", ") = ", body)
        else:
            body = _collapse_alignment(prefix, body)
        processes.setdefault(pid, []).append(body)
    return processes, pending


def _even_out_timing(processes: dict, order: dict, handled_sigchld: bool) -> None:
    """The SIGCHLDs of exited children before their reaping waits (unless a process handles
    SIGCHLD) and the reads of each pipe joined, each process's pipes inherited by its
    children: parents first, in the process tree's order."""
    inherited: dict = {}
    for pid in sorted(processes, key=lambda pid: order.get(pid, len(order))):
        bodies = processes[pid]
        if not handled_sigchld:
            bodies = sigchld_order.ordered(bodies)
        processes[pid], children = pipe_reads.joined(bodies, inherited.get(pid, {}))
        inherited.update(children)


# sigreturn's result is the register it restores: the interrupted code's return value, a pid
# when a signal came right after fork or wait4 returned one.
_SIGRETURN = re.compile(r"^((?:rt_)?sigreturn\(.*\) = )(\d+)$")


def _pids_of(text: str) -> set[str]:
    """The trace's pids: its line prefixes and what fork, vfork and clone returned."""
    pids = set()
    for line in text.splitlines():
        pids.add(_split_prefix(line)[0])
        created = _CREATED.match(line)
        if created is not None:
            pids.add(created.group(3))
    return pids - {None}


def _restored_pid(body: str, pids: set[str]) -> str:
    match = _SIGRETURN.match(body)
    if match is None or match.group(2) not in pids:
        return body
    return match.group(1) + "PID"


_CREATED = re.compile(r"^(?:(\d+) +|\[pid +(\d+)\] )?(?:<\.\.\. )?(?:fork|vfork|clone|clone3)\b.*= (\d+)")


def _creation_order(text: str, root) -> dict:
    """Processes in the order of the process tree: the first one, then each one's children in
    the order it made them, depth first. The labels do not depend on which process ran first
    afterwards (nor on a child's fork line printed before its parent's clone returned)."""
    children: dict = {}
    for line in text.splitlines():
        match = _CREATED.match(line)
        if match is not None:
            parent = match.group(1) or match.group(2) or root
            children.setdefault(parent, []).append(match.group(3))
    order: dict = {}
    pending = [root]
    while pending:
        pid = pending.pop()
        if pid in order:
            continue
        order[pid] = len(order)
        pending.extend(reversed(children.get(pid, [])))
    return order


def identical_share(native: list[str], sandbox: list[str]) -> float:
    """Lines of the native trace that the sandbox's has too, in order (difflib's matching
    blocks), over the longer of the two: 1.0 only when the traces are the same."""
    if not native and not sandbox:
        return 1.0
    matcher = difflib.SequenceMatcher(None, native, sandbox, autojunk=False)
    same = sum(block.size for block in matcher.get_matching_blocks())
    return same / max(len(native), len(sandbox))


def _program_part(native_text: str) -> str:
    """Drop the launcher's own lines: the program starts at the launcher's execve (the second
    execve of the trace; the first is the python interpreter's)."""
    lines = native_text.splitlines(keepends=True)
    execves = [i for i, line in enumerate(lines) if _split_prefix(line)[2].startswith("execve(")]
    if len(execves) < 2:
        raise AssertionError("the native trace has no execve of the program:\n" + native_text[-2000:])
    return "".join(lines[execves[1]:])


def native_trace(argv: list[str], root: Path | None, *, follow: bool, timeout: float = 60,
                 options: tuple[str, ...] = ()) -> str:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "trace"
        options = (["-f"] if follow else []) + list(options)
        if root is None:
            command = [*SANDBOX_LIKE, ensure_strace(), *options, "-o", str(out), *argv]
            env = dict(FIXED_ENV)
            subprocess.run(command, capture_output=True, timeout=timeout, env=env, check=False)
            return out.read_text(errors="replace")
        command = [*SANDBOX_LIKE, ensure_strace(), *options, "-o", str(out), sys.executable, "-I",
                   "-c", _LAUNCHER, str(root), "/", json.dumps(FIXED_ENV), *argv]
        subprocess.run(command, capture_output=True, timeout=timeout, env={}, check=False)
        return _program_part(out.read_text(errors="replace"))


def sandbox_trace(argv: list[str], root: Path | None, *, follow: bool, timeout: float = 120,
                  output_option: bool = True, options: tuple[str, ...] = ()) -> str:
    with tempfile.TemporaryDirectory() as folder:
        out = Path(folder) / "trace"
        command = ["run", "--strace", "--clear-env"]
        if root is not None:
            command += ["--rootfs", str(root), "--cwd", "/"]
        for key, value in FIXED_ENV.items():
            command += ["-E", f"{key}={value}"]
        if follow:
            command.append("-f")
        command += options
        if output_option:
            command += ["-o", str(out)]
        done = run_trapline([*command, "--", *argv], timeout=timeout)    # forked: forkserver.py
        if output_option:
            return out.read_text(errors="replace")
        return done.stderr.decode(errors="replace")


@dataclass(frozen=True)
class Comparison:
    name: str
    arch: str
    native: list[str]
    sandbox: list[str]
    native_text: str = ""          # the traces as strace and trapline wrote them
    sandbox_text: str = ""

    @property
    def share(self) -> float:
        return identical_share(self.native, self.sandbox)

    def diff(self) -> str:
        return "\n".join(difflib.unified_diff(self.native, self.sandbox, "strace", "trapline",
                                              lineterm="", n=1))


def compare(name: str, arch: str, argv: list[str], root: Path | None, *, follow: bool = False,
            output_option: bool = True, options: tuple[str, ...] = ()) -> Comparison:
    """`options`: strace options given to both (-yy, -v...)."""
    native = native_trace(argv, root, follow=follow, options=options)
    sandbox = sandbox_trace(argv, root, follow=follow, output_option=output_option,
                            options=options)
    return Comparison(name, arch, normalize(native), normalize(sandbox), native, sandbox)


def sample_argv(arch: str, name: str) -> list[str]:
    return [str(SAMPLES / SAMPLE_ARCH[arch] / name), *SAMPLE_PROGRAMS[name]]


def compare_sample(arch: str, name: str, output_option: bool = True) -> Comparison:
    """A sample of SAMPLE_PROGRAMS, followed if it forks, with its SAMPLE_OPTIONS."""
    return compare(name, arch, sample_argv(arch, name), None, follow=name in FOLLOWED_SAMPLES,
                   output_option=output_option, options=SAMPLE_OPTIONS.get(name, ()))


def every_comparison(roots: dict[str, Path], output_option: bool = True,
                     dynamic_roots: dict[str, Path] | None = None):
    for arch in ("amd64", "i386"):
        for name, argv in DYNAMIC_PROGRAMS.items() if dynamic_roots else ():
            yield compare(name, arch, argv, dynamic_roots[arch], output_option=output_option)
        for name in SAMPLE_PROGRAMS:
            yield compare_sample(arch, name, output_option)
        for name, (argv, follow) in BUSYBOX_PROGRAMS.items():
            yield compare(name, arch, argv, roots[arch], follow=follow, output_option=output_option)


def main(argv: list[str]) -> int:
    from tests.e2e.conftest import build_rootfs
    from tests.e2e.debian_bins import ensure_debian_bins
    from tests.e2e.debian_rootfs import ensure_debian_rootfs
    bins = ensure_debian_bins()
    dynamic_roots = ensure_debian_rootfs() if "--dynamic" in argv else None
    output_option = "--stderr" not in argv
    with tempfile.TemporaryDirectory() as folder:
        roots = {arch: build_rootfs(Path(folder) / arch, bins[arch]) for arch in bins}
        total_same = total = 0
        for result in every_comparison(roots, output_option, dynamic_roots):
            share = result.share
            lines = max(len(result.native), len(result.sandbox))
            total_same += round(share * lines)
            total += lines
            print(f"{result.arch:6} {result.name:14} {share * 100:5.1f} %  ({lines} lines)")
            if "--diff" in argv:
                print(result.diff())
        print(f"all    {total_same * 100 / max(total, 1):5.1f} %  ({total} lines)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
