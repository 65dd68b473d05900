"""The walk-up on a dynamic Debian binary (issue 18: a library hot spot): Debian's `sort`, which is
stripped, runs most of its time in libc.so.6. Hot spots in the library get their identifying
hooks there (placed by address in the object that holds them), callers inside libc are walked
up, and a caller in the stripped program is named `sort+0xOFF` and never hooked (no symbol says
where its function starts). The output is the unprofiled run's."""
import pytest

from instrumenter.profiler.walkup import WalkUpOptions
from trapline.profile.walkup_run import run_walkup
from trapline.sandbox import Sandbox

pytestmark = pytest.mark.e2e
ARGV = ["/usr/bin/sort", "/usr/share/common-licenses/GPL-3"]


@pytest.mark.parametrize("deb_arch", ["amd64", "i386"])
def test_library_hot_spots_are_walked_and_stripped_callers_named(debian_rootfs, deb_arch):
    rootfs = str(debian_rootfs[deb_arch])
    options = WalkUpOptions(threshold=20, window=30, period=30)
    run = run_walkup(Sandbox(rootfs=rootfs), ARGV, interval=5_000, options=options)
    assert run.result.exit_code == 0
    assert run.result.stdout == Sandbox(rootfs=rootfs).run(ARGV).stdout
    walk = run.walk
    spots = list(walk.detector.decided)
    assert any(f.module == "libc.so.6" for f in spots), spots
    learned = [(caller, entry.function) for entry in walk.callers for caller in entry.callers]
    assert any(caller.module == callee.module == "libc.so.6" for caller, callee in learned), learned
    unnamed = [where for entry in walk.callers for where in entry.unnamed]
    assert unnamed and all(where.startswith("sort+0x") for where in unnamed), unnamed
    assert run.cost.strategies and sum(run.cost.strategies.values()) == len(walk.hooks.placed)
    inserted = sorted(s.function for s in walk.timeline if s.action == "insert")
    removed = [s.function for s in walk.timeline if s.action == "remove"]
    assert inserted == sorted(removed + [e.function for e in walk.callers.instrumented()])
