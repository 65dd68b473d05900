"""Instrumented parents and their children (US 7,185,320) on the child-process samples.

For vfork_probe (vfork children that _exit and that execve), fork_probe (a fork child running
the same probed functions) and vfork_exec_chain (vfork + execve, level after level), on both
arches, under each children policy (follow; detach with lazy and eager vfork backpatching) and
each strategy (trampoline, jump, emulate: the probes sit on the push %ebp/%rbp prologue):

- the output is the sample's recorded output (samples/expected/NAME.out), as natively;
- the parent's records equal the calls it printed: no hit is lost before, during or after a
  vfork, whatever the policy (entry probes and uretprobes both);
- under follow every child's records, under its own pid, equal the calls it printed; under
  detach no child has a record (a vfork child runs the original code, a fork child a copy
  cleaned of every patch, and what they exec is not traced);
- the process monitor reports what it did: backpatched (lazy: at the child's first hit; eager:
  at the pre-fork event) and re-inserted once per vfork, cleaned once per fork.

The naive monitor reproduces FIG. 1: the run ends in the kernel's deadlock report.
"""
from __future__ import annotations

import platform
import subprocess
import sys
from collections import Counter

import pytest

from kernel_model.kernel import Deadlock
from trapline import Sandbox

from ..children_counts import (
    as_probe_counts,
    fork_probe_processes,
    in_pid_order,
    recorded_calls,
    vfork_exec_chain_processes,
    vfork_probe_processes,
)
from ..samples.test_samples_run import SAMPLES
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e

EXPECTED = SAMPLES.parent / "expected"
ARCHES = ("i386", "x86_64")
STRATEGIES = ("trampoline", "jump", "emulate")
POLICIES = (("follow", "lazy"), ("detach", "lazy"), ("detach", "eager"))
FUNCTIONS = ("work", "leaf")
KINDS = ("entry", "return")
CHAIN_LEVELS = 3

# name -> (argv after the program, per-process calls parsed from its output, vforks, forks)
SAMPLE_CASES = {
    "vfork_probe": ([], vfork_probe_processes, 2, 0),
    "fork_probe": ([], fork_probe_processes, 0, 1),
    "vfork_exec_chain": ([str(CHAIN_LEVELS)],
                         lambda out: vfork_exec_chain_processes(out, CHAIN_LEVELS), 1, 0),
}


def probe_specs(name: str, strategy: str) -> list[str]:
    """Entry probes on work and leaf; a uretprobe on work too, except with the jump strategy,
    which refuses a jump over an entry that a uretprobe needs for its int3."""
    specs = [f"uprobe:{name}:work", f"uprobe:{name}:leaf"]
    return specs if strategy == "jump" else specs + [f"uretprobe:{name}:work"]


def expected_records(calls, strategy: str = "trampoline") -> Counter:
    """The records a process's calls must produce: an entry per call of work and leaf, and a
    return per call of work where it has a uretprobe."""
    returns = () if strategy == "jump" else ("work",)
    return (as_probe_counts(calls, FUNCTIONS, ("entry",))
            + as_probe_counts(calls, returns, ("return",)))


def run_sample(name: str, arch: str, args, strategy: str = "trampoline", **options):
    return Sandbox(probes=probe_specs(name, strategy), strategy=strategy,
                   **options).run([str(SAMPLES / arch / name), *args])


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("children,backpatch", POLICIES)
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", sorted(SAMPLE_CASES))
@alternates("arch")
def test_policy_keeps_output_and_counts_per_pid(name, arch, children, backpatch, strategy):
    args, processes_of, vforks, forks = SAMPLE_CASES[name]
    result = run_sample(name, arch, args, children=children, backpatch=backpatch,
                        strategy=strategy)
    expected_out = (EXPECTED / f"{name}.out").read_bytes()
    assert (result.exit_code, result.stdout) == (0, expected_out), result.stderr
    assert result.dropped == {}
    actual = [expected_records(calls, strategy) for calls in processes_of(result.stdout)]
    recorded = in_pid_order(recorded_calls(result.records))
    if children == "follow":
        assert recorded == actual, "each process's records equal the calls it printed"
    else:
        assert recorded == actual[:1], "only the parent is traced, and it lost no hit"
    assert sum(result.hits.values()) == len(result.records)
    assert_monitor_reports(result.monitor, children, backpatch, vforks, forks)


def assert_monitor_reports(reports: list[str], children, backpatch, vforks, forks) -> None:
    """Under follow nothing is backpatched or cleaned. Under detach the traced parent's vforks
    are each backpatched and re-inserted once (lazy: the report names the child's first hit;
    eager: the pre-fork event), and each fork child is cleaned once."""
    def count(word):
        return sum(word in line for line in reports)

    text = "\n".join(reports)
    assert count("prediction wrong") == 0, text
    if children == "follow":
        assert count("backpatched") == count("re-inserted") == count("cleaned") == 0, text
        return
    assert count("backpatched") == count("re-inserted") == vforks, text
    assert count(f"({backpatch}") == vforks, text
    assert count("cleaned") == forks, text


@pytest.mark.parametrize("arch", ARCHES)
def test_vfork_exec_chain_follow_traces_every_level(arch):
    """Five levels of vfork + execve: six processes, each first a vfork child in its parent's
    patched space, then its own freshly instrumented image; every one counted under its pid."""
    result = run_sample("vfork_exec_chain", arch, ["5"], children="follow")
    assert result.exit_code == 0, result.stderr
    actual = [expected_records(c) for c in vfork_exec_chain_processes(result.stdout, 5)]
    per_pid = recorded_calls(result.records)
    assert in_pid_order(per_pid) == actual
    assert len(per_pid) == 6


@pytest.mark.parametrize("backpatch", ["lazy", "eager"])
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_vfork_exec_chain_detach_reinstruments_the_parent_after_the_exec(arch, backpatch):
    """The child leaves the borrowed space by execve: the parent's sites are back before it
    resumes, so its call after the vfork is recorded; the exec'd levels are not traced."""
    result = run_sample("vfork_exec_chain", arch, ["5"], children="detach", backpatch=backpatch)
    assert result.exit_code == 0, result.stderr
    parent = vfork_exec_chain_processes(result.stdout, 5)[0]
    assert parent["work"] == 2
    assert in_pid_order(recorded_calls(result.records)) == [expected_records(parent)]
    backpatched = [i for i, line in enumerate(result.monitor) if "backpatched" in line]
    reinserted = [i for i, line in enumerate(result.monitor) if "re-inserted" in line]
    assert len(backpatched) == len(reinserted) == 1 and backpatched[0] < reinserted[0], (
        result.monitor)


@pytest.mark.parametrize("arch", ARCHES)
def test_naive_monitor_deadlocks_like_fig_1(arch):
    """US 7,185,320 FIG. 1: the vfork child stops at an inherited breakpoint nobody waits for, the
    parent sleeps until the child is done, the tool waits for the parent: a deadlock report,
    never a hang."""
    with pytest.raises(Deadlock) as raised:
        run_sample("vfork_probe", arch, [], children="naive")
    report = str(raised.value)
    lines = report.splitlines()
    parent = next(line for line in lines if "pid 100 " in line)
    child = next(line for line in lines if "pid 101 " in line)
    tool = next(line for line in lines if "tool" in line)
    assert "vfork child 101" in parent, report
    assert "breakpoint" in child and "tracer" in child, report
    assert "parent" in tool and "100" in tool, report


@pytest.mark.parametrize("arch", ARCHES)
def test_naive_monitor_runs_fork_children_to_completion(arch):
    """FIG. 1 is about vfork: a fork child has its own (cleaned) copy and cannot block the
    parent, so the naive monitor finishes fork_probe with the parent's counts intact."""
    result = run_sample("fork_probe", arch, [], children="naive")
    assert result.stdout == (EXPECTED / "fork_probe.out").read_bytes()
    parent = fork_probe_processes(result.stdout)[0]
    assert in_pid_order(recorded_calls(result.records)) == [expected_records(parent)]


RUNS_NATIVELY = sys.platform == "linux" and platform.machine() == "x86_64"


@pytest.mark.skipif(not RUNS_NATIVELY, reason="needs a Linux x86-64 host to run the samples")
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", sorted(SAMPLE_CASES))
@alternates("arch")
def test_native_run_prints_the_expected_output(name, arch):
    """The expected outputs are what the samples print natively (else they are stale)."""
    args = SAMPLE_CASES[name][0]
    done = subprocess.run([str(SAMPLES / arch / name), *args], capture_output=True, timeout=60)
    assert (done.returncode, done.stderr) == (0, b"")
    assert done.stdout == (EXPECTED / f"{name}.out").read_bytes()


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("children", ("follow", "detach", "naive"))
@pytest.mark.parametrize("strategy", STRATEGIES)
@alternates("arch")
def test_clone_vm_workers_keep_the_parents_probes_under_every_policy(arch, children, strategy):
    """loss_procs' workers (clone with CLONE_VM, neither fork nor vfork) run in the parent's
    memory while it runs: there is no copy to clean, and taking the shared patches out would
    lose the parent's hits. Every policy keeps them; each worker's hits carry its own pid."""
    workers, calls = 3, 20
    result = Sandbox(probes=["uprobe:loss_procs:probed"], strategy=strategy, children=children
                     ).run([str(SAMPLES / arch / "loss_procs"), str(workers), str(calls)])
    assert result.stdout == f"processes={workers} calls={workers * calls}\n".encode()
    assert result.hits == {"uprobe:loss_procs:probed": workers * calls}
    per_pid = Counter(r.pid for r in result.records)
    assert sorted(per_pid.values()) == [calls] * workers and 100 not in per_pid
    shared = [line for line in result.monitor if "shares the memory of pid 100" in line]
    assert len(shared) == (workers if children != "follow" else 0)
