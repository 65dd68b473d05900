"""Library probes on the committed dynamic samples (samples/dyn/), both arches, PIE and not
(issue 14): the samples are their own oracles.

malloc_count calls malloc exactly N times and nothing else in it allocates (write(2) only, no
stdio, no locale), so `uprobe:libc.so.6:malloc` must count N; strlen_calls calls libc's strlen
through the PLT on six known strings, so `uretprobe:libc.so.6:strlen` (an IFUNC in glibc: the
probe waits for its resolver, instrumenter/tracing/ifunc.py) must report exactly those six lengths.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.e2e.debian_bins import ARCHES
from tests.e2e.forkserver import run_trapline
from tests.e2e.rootfs_variants import EXTRA_DIR
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e
VARIANTS = ("", "-pie")


def _trace(root, argv: list[str], probe: str) -> tuple[list[dict], bytes]:
    command = ["trace", "--rootfs", str(root), "--clear-env", "--format", "jsonl", "-p", probe,
               "--", *argv]
    done = run_trapline(command, timeout=300, cwd=Path.cwd())     # forked: forkserver.py
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    lines = done.stdout.splitlines()
    events = [json.loads(line) for line in lines if line.startswith(b'{"ts"')]
    output = b"\n".join(line for line in lines if not line.startswith(b'{"ts"'))
    return events, output


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("variant", VARIANTS)
@alternates("arch")
def test_malloc_probe_counts_exactly_the_calls_the_program_made(arch, variant, dyn_samples_rootfs):
    events, output = _trace(dyn_samples_rootfs(arch), [f"/{EXTRA_DIR}/malloc_count{variant}", "37"],
                            "uprobe:libc.so.6:malloc")
    assert output.splitlines()[0] == b"malloc calls: 37"
    assert len(events) == 37


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("variant", VARIANTS)
@alternates("arch")
def test_strlen_return_probe_reports_the_lengths(arch, variant, dyn_samples_rootfs):
    events, output = _trace(dyn_samples_rootfs(arch), [f"/{EXTRA_DIR}/strlen_calls{variant}"],
                            "uretprobe:libc.so.6:strlen")
    printed = [int(line.rsplit(b"=", 1)[1]) for line in output.splitlines() if b"strlen[" in line]
    assert [e["retval"] for e in events] == printed == [0, 1, 5, 12, 32, 65]


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("variant", VARIANTS)
@alternates("arch")
def test_a_strlen_probe_first_added_after_the_binding_is_read_from_the_got(arch, variant, dyn_samples_rootfs):
    """The return probe on strlen is first added by the first write(2) of a length: strlen's
    resolver ran already (the PLT slot is bound, lazily or at load) and nobody watched it. The
    probe goes where the GOT slots point (instrumenter/tracing/ifunc.py bound_implementations)
    and reports exactly the five lengths printed after that."""
    from instrumenter.probes.definitions import Probe
    from trapline import Sandbox
    from trapline.probespec import parse_probe_spec
    late = Probe(parse_probe_spec("uretprobe:libc.so.6:strlen"))
    sessions = []

    def add_late(ctx):
        if late not in sessions[0].probes:
            sessions[0].add_probe(late)
    trigger = Probe(parse_probe_spec("uprobe:libc.so.6:write"), action=add_late)
    result = Sandbox(rootfs=str(dyn_samples_rootfs(arch)), clear_env=True, probes=[trigger],
                     on_start=lambda kernel, proc, session: sessions.append(session)).run(
        [f"/{EXTRA_DIR}/strlen_calls{variant}"])
    printed = [int(line.rsplit(b"=", 1)[1]) for line in result.stdout.splitlines()]
    assert printed == [0, 1, 5, 12, 32, 65]
    assert [r.retval for r in result.records if r.probe == late.spec.text] == printed[1:]
