"""printf captured in the guest (trapline/lang/native_printf.py): a site whose blocks only
printf argument words and integers stores the words in the guest and formats them in
batches, with stdout byte for byte the Python path's (the same program with a second
consumer reading comm on each printing site, which keeps them in Python), the guest's own
output, other sites' lines and other processes' and threads' lines in the same order; both
arches."""
import io

import pytest

from trapline.lang.runner import make_consumers, run
from tests.e2e.lang.lang_run import ARCHES, sample, trace

pytestmark = pytest.mark.e2e


def _python_path(program: str, sites: list[str], argv: list[str]) -> str:
    keep = " ".join(f"{site} {{ @comm[comm] = count(); }}" for site in sites)
    done = trace("-e", program, "-e", keep, "--", *argv)
    # up to the consumers' exits (two newlines each) and the second one's map
    return done.stdout[:done.stdout.rindex("@comm")].rstrip("\n")


def _captured(program: str, argv: list[str]) -> str:
    done = trace("-e", program, "--", *argv)
    assert done.stdout.endswith("\n\n\n")                # the consumer's exit: no map
    return done.stdout.rstrip("\n")


def _printf_sites(program: str, argv: list[str]) -> list[str]:
    consumers = make_consumers([(program, "-e")], io.StringIO(), lambda line: None)
    return run(consumers, argv, {"capture": True}, strategy="auto").printf_sites


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name, functions, args", [
    ("fork_probe", ["leaf", "work"], []),          # a parent and its child, the guest's lines between
    ("threads", ["check", "worker"], []),          # four threads, preempted
    ("fib", ["fib"], ["12"]),
])
def test_captured_lines_are_the_python_paths_in_the_same_order(arch, name, functions, args):
    binary = sample(arch, name)
    sites = [f"uprobe:{binary}:{function}" for function in functions]
    program = " ".join(f'{site} {{ printf("{function} %d %x %5u|%-3o|\\n", arg0, arg1, 7, 8); }}'
                       for site, function in zip(sites, functions))
    argv = [binary, *args]
    assert _printf_sites(program, argv) == [sites[0]]        # one site a run is captured
    captured = _captured(program, argv)
    assert captured == _python_path(program, sites, argv)
    assert captured.count(functions[0]) > 2


@pytest.mark.parametrize("arch", ARCHES)
def test_a_guarded_printf_prints_what_its_predicate_accepts(arch):
    fib = sample(arch, "fib")
    site = f"uprobe:{fib}:fib"
    program = f'{site} /arg0 < 3 || arg0 == 7/ {{ printf("%d\\n", arg0); }} {site} {{ printf("x\\n"); }}'
    assert _printf_sites(program, [fib, "10"]) == [site]
    captured = _captured(program, [fib, "10"])
    assert captured == _python_path(program, [site], [fib, "10"])
    assert captured.count("7\n") == 3 and captured.count("x\n") == 177


# A parent and its child each call tick() in a loop with no system call between the calls, so
# the scheduler's quantum interleaves their hits: each process's records sit in its own copy
# of the buffer, and only a drain whenever a thread leaves the CPU (the door's on_switch_out)
# keeps their lines in the order the hits happened. The order is the guest's own: each call
# takes a number from a counter the two processes share (fetched just before the call).
# (Not compared with the Python path here: a trapping hit runs other instructions than a
# stored one, so the quantum ends elsewhere and the processes interleave differently.)
TWO_PROCESSES = r"""
#include <stdio.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
__attribute__((noinline)) long tick(long i, long shown, long role, long seq) { return i + shown + role + seq; }
int main(void) {
    long *counter = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    long role = fork() == 0, total = 0;
    for (long i = 0; i < 300000; i++)
        total += tick(i, i % 7500 == 0, role, __atomic_fetch_add(counter, 1, __ATOMIC_SEQ_CST));
    if (role) return total & 1;
    wait(NULL);
    printf("done\n");
    return 0;
}
"""


@pytest.fixture(scope="module", params=ARCHES)
def two_processes(request, tmp_path_factory):
    from tests.e2e.static_c import build_static
    return str(build_static(tmp_path_factory, "twoprocs", TWO_PROCESSES, arch=request.param))


def test_two_processes_interleaved_by_the_scheduler_print_in_hit_order(two_processes):
    site = f"uprobe:{two_processes}:tick"
    program = f'{site} /arg1 != 0/ {{ printf("%d %d\\n", arg2, arg3); }}'
    assert _printf_sites(program, [two_processes]) == [site]
    lines = [line.split() for line in _captured(program, [two_processes]).splitlines()]
    assert lines[-1] == ["done"] and len(lines) == 81
    roles, numbers = [role for role, _ in lines[:-1]], [int(n) for _, n in lines[:-1]]
    assert numbers == sorted(numbers)                                # the order of the hits
    assert "0" in roles[roles.index("1"):]                           # the processes did interleave
