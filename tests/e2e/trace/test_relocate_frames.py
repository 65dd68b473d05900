"""Original-space return pointers (US 6,898,785) on glibc programs: with every
function of relocate_frames (return addresses, libgcc unwinding, longjmp, a signal handler
unwinding through its frame, an alarm during a relocated loop) and of cxx_throw (a C++
exception thrown from libstdc++ through relocated main) probed under `--strategy relocate`,
each prints exactly its native output (samples/dyn/expected), and the probes count what the
trampoline strategy counts.
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
EXPECTED = Path(__file__).resolve().parents[3] / "samples" / "dyn" / "expected"
FUNCTIONS = {
    "relocate_frames": ("show_caller", "unwind_here", "leaf", "middle", "outer", "jump_leaf",
                        "jump_middle", "jumper", "on_usr1", "signalled", "spin", "main"),
    "cxx_throw": ("main", "_ZN5GuardD2Ev"),
}


def _trace(root, program: str, strategy: str) -> tuple[dict, bytes]:
    name = program.removesuffix("-pie")
    probes = [arg for f in FUNCTIONS[name] for arg in ("-p", f"uprobe:{program}:{f}")]
    command = ["trace", "--rootfs", str(root), "--clear-env", "--strategy", strategy,
               "--format", "jsonl", *probes, "--", f"/{EXTRA_DIR}/{program}"]
    done = run_trapline(command, timeout=300, cwd=Path.cwd())     # forked: forkserver.py
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    hits: dict = {}
    output = []
    for line in done.stdout.splitlines(keepends=True):
        if line.startswith(b'{"ts"'):
            probe = json.loads(line)["probe"]
            hits[probe] = hits.get(probe, 0) + 1
        else:
            output.append(line)
    return hits, b"".join(output)


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("variant", ("", "-pie"))
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@alternates("arch")
def test_relocated_functions_show_original_return_addresses(arch, variant, name,
                                                             dyn_samples_rootfs):
    root = dyn_samples_rootfs(arch)
    hits, output = _trace(root, name + variant, "relocate")
    assert output == (EXPECTED / f"{name}.out").read_bytes()
    trampoline_hits, _ = _trace(root, name + variant, "trampoline")
    assert hits == trampoline_hits and sum(hits.values()) >= 2
