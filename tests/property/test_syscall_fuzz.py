"""Syscall fuzzer: random call numbers and argument words on both ABIs never give a Python
traceback (issue 13).

Each example is a guest program (tests/property/syscall_fuzz_guest.py) making a drawn run of
calls: i386 programs through int 0x80, x86-64 programs through `syscall` and int 0x80 (the
i386 table from 64-bit code). Arguments are drawn from values that find bugs: 0, -1, small and
huge integers, every-bit flags, valid and invalid fds, and pointers into code (r-x), a
read-only page, the data segment (paths, a page-straddling end), the stack, unmapped and
kernel addresses.

What may happen to the guest is what may happen under Linux: results and errnos, death by a
signal, sleeping forever (the kernel stops the run with its Deadlock report), or running out
of the instruction budget (a signal handler pointed into the code loops). Half the programs run
under strace -f, whose formatter decodes every argument from guest memory. What must never
happen is any other exception out of Kernel.run: a kernel bug is a KernelPanic naming the call,
its arguments and where the exception came from, and that fails this test.

Left out are only the calls whose whole effect is to end or replace the process (exit,
exit_group, execve, execveat): the run ends there and would hide everything after it.

Cost: a run is a few milliseconds, so the test takes EXAMPLES_PER_PROFILE_EXAMPLE times the
profile's example count: the ci profile (30, derandomized) gives 240 programs per arch;
`--hypothesis-profile=thorough` (4 000) gives 32 000 per arch, a long fuzzing session.
"""
import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Deadlock, InstructionBudgetExceeded, Kernel, KernelConfig
from kernel_model.syscalls import numbers_i386, numbers_x86_64
from kernel_model.syscalls.registry import all_declarations
from trapline.strace.client import StraceClient

from .syscall_fuzz_guest import (CODE_VADDR, DATA_SIZE, DATA_VADDR, PATH_ADDRESSES, RO_VADDR,
                                 SCRATCH, STACK_POINTER, STRUCT_ZONE, STRUCT_ZONE_SIZE, UNMAPPED,
                                 make_rootfs, program)

IMPLEMENTATIONS = all_declarations()
ENDS_OR_REPLACES = {"exit", "exit_group", "execve", "execveat"}
TABLES = {gate: table for gate, table in (("int80", numbers_i386.NUMBERS),
                                           ("syscall", numbers_x86_64.NUMBERS))}
# The calls the kernel model implements are drawn most: a -ENOSYS answer finds no bug
IMPLEMENTED = {gate: sorted(nr for nr, name in table.items()
                            if name in IMPLEMENTATIONS and name not in ENDS_OR_REPLACES)
               for gate, table in TABLES.items()}
OTHERS = {gate: sorted(nr for nr, name in table.items()
                       if name not in IMPLEMENTATIONS and name not in ENDS_OR_REPLACES)
          for gate, table in TABLES.items()}
MAX_CALLS = 24
EXAMPLES_PER_PROFILE_EXAMPLE = 8
MAX_INSNS = 200_000           # a loop (a handler pointed into the code) ends here
MEMORY_LIMIT = 64 << 20       # a drawn huge length cannot make the host allocate much

M64 = 2**64 - 1
INTEGERS = st.sampled_from([0, 1, 2, 3, 4, 7, 8, 16, 64, 255, 256, 4096, 0x7FFF, 0xFFFF,
                            0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0x100000000, 2**63 - 1,
                            2**63, M64, M64 - 99, M64 - 4095])      # ... -100 = AT_FDCWD
FDS = st.sampled_from([0, 1, 2, 3, 4, 5, 6, 63, 1023, 1024, 65535, 0x7FFFFFFF, M64])
POINTERS = st.one_of(
    st.sampled_from(PATH_ADDRESSES),
    st.sampled_from([STRUCT_ZONE, STRUCT_ZONE + 8, STRUCT_ZONE + 0x40, STRUCT_ZONE + 0x100]),
    st.sampled_from([SCRATCH, CODE_VADDR, RO_VADDR, RO_VADDR + 0xFF0, DATA_VADDR,
                     DATA_VADDR + DATA_SIZE - 1, DATA_VADDR + DATA_SIZE - 8,
                     DATA_VADDR + DATA_SIZE - 64, UNMAPPED, UNMAPPED - 2, 0x1000, 0xC0000000,
                     0xFFFFF000, 0xFFFF800000000000, 0x00007FFFFFFFF000, STACK_POINTER]),
    st.integers(DATA_VADDR, DATA_VADDR + DATA_SIZE - 1),
)
SMALL = st.integers(0, 300)
ARGUMENT = st.one_of(INTEGERS, FDS, POINTERS, SMALL, st.integers(0, M64),
                     st.integers(-64, -1).map(lambda v: v & M64))
# The struct zone: words that make half-valid structures (counts, lengths, data pointers)
ZONE_WORD = st.one_of(st.integers(0, 16), st.sampled_from([STRUCT_ZONE, STRUCT_ZONE + 0x80,
                                                           SCRATCH, DATA_VADDR, UNMAPPED]),
                      st.integers(0, 2**32 - 1), st.just(M64))
ZONE = st.lists(st.tuples(ZONE_WORD, st.sampled_from([4, 8])), max_size=48).map(
    lambda words: b"".join((w & (2**(8 * n) - 1)).to_bytes(n, "little") for w, n in words))


def call(gates):
    """One call (gate, number, six argument words); rarely a number outside the table."""
    def with_gate(gate):
        known = st.sampled_from(IMPLEMENTED[gate])
        nr = st.one_of(known, known, known, known, known, known, st.sampled_from(OTHERS[gate]),
                       st.integers(0, 1100), st.sampled_from([M64, 2**31]))
        return st.tuples(st.just(gate), nr, st.tuples(*[ARGUMENT] * 6))
    return st.sampled_from(gates).flatmap(with_gate)


GATES = {"i386": ("int80",), "x86_64": ("syscall", "syscall", "int80")}


@pytest.fixture(scope="module")
def rootfs(tmp_path_factory):
    """A small tree the guest's paths meet: a file, a folder with a file, a symlink."""
    root = tmp_path_factory.mktemp("fuzzroot")
    make_rootfs(root)
    return root


def run_guest(rootfs, arch: str, calls, zone: bytes = b"", traced: bool = False,
              strace_out=None) -> Kernel:
    """Run the program; with `traced`, under strace -f (the formatter reads every argument
    and structure from guest memory: more code that must not raise), into `strace_out`."""
    path = rootfs / "prog"
    path.write_bytes(program(arch, calls, zone))
    path.chmod(0o755)
    report = io.StringIO()
    kernel = Kernel(KernelConfig(rootfs=str(rootfs), stdin=CapturedOutput(b"input\n"),
                                 stdout=CapturedOutput(), stderr=CapturedOutput(),
                                 report=report, max_insns=MAX_INSNS, max_tasks=6,
                                 memory_limit=MEMORY_LIMIT))
    if traced:
        StraceClient(kernel.debug, strace_out or io.StringIO(), follow_forks=True).attach()
    try:
        kernel.run(kernel.spawn(b"/prog", [b"prog"], [b"PATH=/"]))
    except (Deadlock, InstructionBudgetExceeded):
        pass                    # the guest slept forever or looped: Linux would too
    return kernel


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
@settings(max_examples=settings.default.max_examples * EXAMPLES_PER_PROFILE_EXAMPLE,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                 HealthCheck.data_too_large])
@given(data=st.data())
def test_random_syscalls_never_raise(rootfs, arch, data):
    calls = data.draw(st.lists(call(GATES[arch]), min_size=1, max_size=MAX_CALLS), label="calls")
    zone = data.draw(ZONE, label="struct zone")
    run_guest(rootfs, arch, calls, zone, traced=data.draw(st.booleans(), label="strace"))


@pytest.mark.parametrize(("arch", "gate", "read_nr"),
                         [("i386", "int80", 3), ("x86_64", "syscall", 0), ("x86_64", "int80", 3)])
def test_a_guest_that_blocks_forever_ends_with_the_deadlock_report(rootfs, arch, gate, read_nr):
    """read() from the prelude's pipe (fd 5) whose write end (fd 6) the reader holds itself:
    nothing can ever wake it, as on Linux; the kernel stops the run and says why."""
    path = rootfs / "prog"
    path.write_bytes(program(arch, [(gate, read_nr, (5, SCRATCH, 16, 0, 0, 0))]))
    path.chmod(0o755)
    kernel = Kernel(KernelConfig(rootfs=str(rootfs), stdin=CapturedOutput(),
                                 stdout=CapturedOutput(), stderr=CapturedOutput(),
                                 report=io.StringIO()))
    with pytest.raises(Deadlock) as info:
        kernel.run(kernel.spawn(b"/prog", [b"prog"], []))
    assert "pid 100" in str(info.value) and "read" in str(info.value), str(info.value)


@pytest.mark.parametrize(("arch", "gate", "writev"),
                         [("i386", "int80", 146), ("x86_64", "syscall", 20)])
def test_strace_shows_32_iovec_entries_of_a_huge_count(rootfs, arch, gate, writev):
    """The fuzzer's find: strace read all 0x7fffffff entries (MemoryError); like strace it
    prints 32, then "..."."""
    out = io.StringIO()
    run_guest(rootfs, arch, [(gate, writev, (1, SCRATCH, 0x7FFFFFFF, 0, 0, 0))], traced=True,
              strace_out=out)
    [line] = [t for t in out.getvalue().splitlines() if "writev(" in t]
    assert line.startswith("writev(1, [{iov_base=") and line.count("iov_base") == 32
    assert line.endswith(", ...], 2147483647) = -1 EINVAL (Invalid argument)"), line
