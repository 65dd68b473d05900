"""Calls that read arrays from user memory answer as the host's Linux does, on both ABIs, and
never panic (issue 26: readv(1, 0x47b0e0, 0x7fffffff) and writev(1, 0xe, -1) were
KernelPanics, a negative size reaching emu/memory.py's read).

Each example is one call with its array pointer (iovec, pollfd) and the pointers inside it
drawn from: the data segment, a spot straddling its end (the next page is unmapped), a
read-only page, an unmapped page, NULL; counts and lengths from 0, small, the array's own, the
limits (UIO_MAXIOV 1024, RLIMIT_NOFILE 1024) and past them, huge and negative. The call runs in
the guest and natively on the host (user_array_cases.py): the result (or errno), the data
segment after it (what readv stored, poll's revents) and the file (what writev wrote) must be
the host's. The property asserts it met every call and each interesting answer (success,
EFAULT, EINVAL, a short transfer).
"""
import io

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from kernel_model import errno as E
from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig
from kernel_model.syscalls import numbers_i386, numbers_x86_64

from .syscall_fuzz_guest import DATA_SIZE, DATA_VADDR, make_rootfs, program
from .user_array_cases import (FILE_BYTES, GUEST, GUEST_NAMES, ZONE_OFFSET, guest_args,
                               run_on_host, zone_bytes)

NUMBERS = {"i386": {name: nr for nr, name in numbers_i386.NUMBERS.items()},
           "x86_64": {name: nr for nr, name in numbers_x86_64.NUMBERS.items()}}
GATE = {"i386": "int80", "x86_64": "syscall"}
CALLS = ("readv", "writev", "poll", "select", "getgroups", "setgroups", "rt_sigprocmask")
ARCH_CALLS = {"x86_64": CALLS, "i386": CALLS + ("getgroups32", "setgroups32")}

BUFFER = st.one_of(st.tuples(st.just("data"), st.integers(0x3100, 0x3F00)),
                   st.tuples(st.just("data"), st.integers(DATA_SIZE - 64, DATA_SIZE - 1)),
                   st.tuples(st.just("ro"), st.integers(0, 0xFFF)),
                   st.just(("unmapped",)), st.just(("null",)))
ARRAY = st.one_of(*[st.just(("data", ZONE_OFFSET))] * 6,
                  st.tuples(st.just("data"), st.integers(DATA_SIZE - 40, DATA_SIZE - 1)),
                  st.just(("ro", 0)), st.just(("unmapped",)), st.just(("null",)))
LENGTH = st.one_of(st.sampled_from([0, 1, 5, 16, 100, 0x1000, 0x7FFFF000, -1, -1]),
                   st.integers(0, 0x2000))
COUNT_EXTRA = st.sampled_from([0, 1, 2, 1024, 1025, 0x7FFFFFFF, 0x80000000, -1])


# select: two fd_sets of 128 bytes (1024 bits) then a zero timeval in the zone; its bits name
# open fds (3-7, the same files on both sides) and closed ones (40, 60: EBADF). A set may
# straddle the data segment's end (its tail is zero), so only a read cut to the fd table's
# 64 bits succeeds there (core_sys_select), or be unmapped or NULL.
FD_SET = st.lists(st.sampled_from([3, 4, 5, 6, 7, 40, 60]), max_size=4)
FD_SET_AT = st.one_of(st.tuples(st.just("data"), st.integers(DATA_SIZE - 130, DATA_SIZE - 1)),
                      st.just(("unmapped",)), st.just(("null",)))
NFDS = st.sampled_from([0, 1, 6, 8, 41, 64, 65, 128, 1024, 1025, 0x7FFFFFFF, -1])
GROUPS_SIZE = st.sampled_from([0, 1, 3, 8, 65536, 65537, 0x7FFFFFFF, 0x80000000, -1, -1, -1])
SIGSETSIZE = st.sampled_from([8, 8, 8, 0, 4, 16, -1])


def _fd_set(fds) -> bytes:
    return sum(1 << fd for fd in fds).to_bytes(128, "little")


def _select_case(draw):
    read_set, write_set = draw(FD_SET), draw(FD_SET)
    entries = [_fd_set(read_set), _fd_set(write_set), bytes(16)]
    readfds = draw(st.one_of(*[st.just(("data", ZONE_OFFSET))] * 3, FD_SET_AT))
    writefds = draw(st.sampled_from([("data", ZONE_OFFSET + 128), ("null",)]))
    args = (draw(NFDS), readfds, writefds, ("null",), ("data", ZONE_OFFSET + 256))
    return "select", args, entries


def _groups_case(draw, call):
    gids = draw(st.lists(st.sampled_from([0, 1, 100, 65533]), max_size=6))
    size = draw(st.one_of(GROUPS_SIZE, st.just(len(gids))))
    return call, (size, draw(ARRAY)), gids


def _sigprocmask_case(draw):
    entries = [draw(st.sampled_from([bytes(8), b"\xff" * 8, (1 << 9 | 1 << 1).to_bytes(8, "little")]))]
    oldset = draw(st.one_of(st.just(("data", ZONE_OFFSET + 64)),
                            st.tuples(st.just("data"), st.integers(DATA_SIZE - 10, DATA_SIZE - 1)),
                            st.just(("ro", 0)), st.just(("unmapped",)), st.just(("null",))))
    how = draw(st.sampled_from([0, 1, 2, 3, -1]))
    return "rt_sigprocmask", (how, draw(ARRAY), oldset, draw(SIGSETSIZE)), entries


@st.composite
def cases(draw, arch, call=None):
    call = call or draw(st.sampled_from(ARCH_CALLS[arch]))
    if call == "select":
        return _select_case(draw)
    if "groups" in call:
        return _groups_case(draw, call)
    if call == "rt_sigprocmask":
        return _sigprocmask_case(draw)
    if call == "poll":
        entries = draw(st.lists(st.tuples(st.sampled_from([-1, 3, 5, 6, 7, 60]),
                                          st.sampled_from([0, 1, 4, 5, 0x7FFF])), max_size=8))
    else:
        entries = draw(st.lists(st.tuples(BUFFER, LENGTH), min_size=1, max_size=8))
    count = draw(st.one_of(COUNT_EXTRA, COUNT_EXTRA, *[st.just(len(entries))] * 4,
                           st.integers(0, 12)))
    array = draw(ARRAY)
    args = (3, array, count) if call != "poll" else (array, count, 0)
    return call, args, entries


@pytest.fixture(scope="module")
def rootfs(tmp_path_factory):
    root = tmp_path_factory.mktemp("arrayroot")
    make_rootfs(root)
    return root


class Results:
    """The door's syscall stops: the call's result and the data segment as it left it."""

    def __init__(self, debug, name: str):
        self.debug, self.name, self.seen = debug, name, None

    def syscall_entry(self, thread, name, args):
        pass

    def syscall_exit(self, thread, name, args, result):
        if name == self.name and self.seen is None:
            data = self.debug.peek(thread.process, DATA_VADDR, DATA_SIZE)
            # The file as the guest has it (the sandbox never writes the host's rootfs)
            file = thread.process.fds.get(3).pread(1 << 16, 0)
            self.seen = (result, data, file)


def run_in_guest(rootfs, arch: str, case) -> tuple[int, bytes, bytes]:
    path = rootfs / "prog"
    call = (GATE[arch], NUMBERS[arch][GUEST_NAMES[arch].get(case[0], case[0])],
            guest_args(arch, case))
    path.write_bytes(program(arch, [call], zone_bytes(GUEST[arch], case)))
    path.chmod(0o755)
    kernel = Kernel(KernelConfig(rootfs=str(rootfs), stdin=CapturedOutput(b"input\n"),
                                 stdout=CapturedOutput(), stderr=CapturedOutput(),
                                 report=io.StringIO(), max_insns=100_000,
                                 memory_limit=64 << 20))
    results = Results(kernel.debug, GUEST_NAMES[arch].get(case[0], case[0]))
    kernel.debug.syscall_watchers.append(results)
    kernel.run(kernel.spawn(b"/prog", [b"prog"], []))      # a KernelPanic fails the test
    return results.seen


def _kind(result: int, case) -> str:
    """The answer's kind: an errno, "short" (less moved than the segments asked for, the
    file's end aside) or "ok"."""
    if result < 0:
        return {-E.EFAULT: "EFAULT", -E.EINVAL: "EINVAL", -E.EBADF: "EBADF"}.get(result, str(-result))
    if case[0] not in ("readv", "writev"):
        return "ok"
    requested = sum(max(n, 0) for _, n in case[2][:case[1][2] & 0xFFFFFFFF])
    if case[0] == "readv":
        requested = min(requested, len(FILE_BYTES))
    return "short" if result < requested else "ok"


def _unzoned(data: bytes, case) -> bytes:
    """The data segment less an iovec array, whose pointers differ between the two sides (a
    pollfd array has none: its revents are compared)."""
    if case[0] not in ("readv", "writev"):
        return data
    size = len(case[2]) * 16                   # the x86-64 iovec's size: the larger one
    return data[:ZONE_OFFSET] + bytes(size) + data[ZONE_OFFSET + size:]


@settings(max_examples=settings.default.max_examples * 2, deadline=None,
          suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def _answers_as_the_hosts_linux(rootfs, tmp_dir: str, arch: str, call: str, seen: set, data):
    case = data.draw(cases(arch, call))
    host = run_on_host(arch, case, tmp_dir)
    guest = run_in_guest(rootfs, arch, case)
    assert guest[0] == host[0], f"{case}: sandbox {guest[0]}, host {host[0]}"
    assert _unzoned(guest[1], case) == _unzoned(host[1], case), \
        f"{case}: the data segment differs after the call"
    assert guest[2] == host[2], f"{case}: the file differs after the call"
    kind = _kind(host[0], case)
    event(kind)
    seen.add(kind)


def _wanted(call: str) -> set[str]:
    """The answers each call must reach (ok, EFAULT and EINVAL; a short transfer for the
    vectors; EBADF for select), so that no example set passes on one early check."""
    wanted = {"ok", "EFAULT", "EINVAL"}
    if call in ("readv", "writev"):
        wanted.add("short")
    if call == "select":
        wanted.add("EBADF")
    if call.startswith("getgroups"):
        wanted.discard("EFAULT")      # reached only with groups to copy out: not required
    return wanted


@pytest.mark.parametrize("arch,call", [(arch, call) for arch in ("i386", "x86_64")
                                       for call in ARCH_CALLS[arch]])
def test_user_arrays_answer_as_the_hosts_linux(rootfs, tmp_path, arch, call):
    """Every example answers as the host's Linux, and the examples of each call reach each of
    its answers (checked in the same test: a second test reading a module-level tally could run
    in another pytest-xdist worker, where the tally is empty)."""
    seen: set = set()
    _answers_as_the_hosts_linux(rootfs, str(tmp_path), arch, call, seen)
    missing = _wanted(call) - seen
    assert not missing, f"{call} never reached: {sorted(missing)}"
