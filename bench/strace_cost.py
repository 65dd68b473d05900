"""The cost of one strace line: `busybox dd bs=1` with and without `--strace`, A/B.

`busybox dd if=/bin/busybox of=/dev/null bs=1 count=N` makes 2N system calls; run under
`trapline run --rootfs R` and under `trapline run --strace --rootfs R` (lines into a pipe) in turns
(so that drift in the host's load hits both alike), the difference of the median CPU times
(user+sys of the whole process), divided by 2N, is what decoding and printing one call costs.
With `--against TREE` (another checkout, e.g. a `git worktree` of the base), the same runs of
that tree's trapline come in the same turns: the figure before and after a change.

`python3 -m bench.strace_cost [--count N] [--runs K] [--arch amd64|i386] [--against TREE]`
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from .common import ROOT, timed_run

BUSYBOX = ROOT / "tests" / "e2e" / ".cache" / "debian" / "{arch}" / "root" / "bin" / "busybox"


def _command(tree: Path, root: Path, count: int, strace: bool) -> tuple[list[str], dict]:
    options = ["--strace"] if strace else []       # (lines on stderr: a tree without -o too)
    argv = [sys.executable, "-m", "trapline", "run", *options, "--rootfs", str(root), "--",
            "/bin/busybox", "dd", "if=/bin/busybox", "of=/dev/null", "bs=1", f"count={count}"]
    return argv, {"PYTHONPATH": str(tree)}


def _cpu(tree: Path, root: Path, count: int, strace: bool) -> float:
    argv, env = _command(tree, root, count, strace)
    saved = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = env["PYTHONPATH"]
    cwd = os.getcwd()
    os.chdir(tree)                      # `python -m trapline` finds the tree's package
    try:
        return timed_run(argv, stderr_must_hold=b"records out")[1]
    finally:
        os.chdir(cwd)
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved


def measure(trees: dict[str, Path], root: Path, count: int, runs: int) -> dict[str, tuple[float, float]]:
    """{label: (median CPU without --strace, with it)} over `runs` turns."""
    samples: dict[tuple[str, bool], list[float]] = {(label, s): [] for label in trees
                                                    for s in (False, True)}
    for _ in range(runs):
        for label, tree in trees.items():
            for strace in (False, True):
                samples[(label, strace)].append(_cpu(tree, root, count, strace))
    return {label: (statistics.median(samples[(label, False)]),
                    statistics.median(samples[(label, True)])) for label in trees}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--arch", default="amd64", choices=("amd64", "i386"))
    parser.add_argument("--against", type=Path, default=None, metavar="TREE")
    options = parser.parse_args(argv)
    trees = {"this tree": ROOT}
    if options.against is not None:
        trees = {"against": options.against.resolve(), **trees}
    calls = 2 * options.count
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "bin").mkdir()
        (root / "dev").mkdir()
        shutil.copy(str(BUSYBOX).format(arch=options.arch), root / "bin" / "busybox")
        for label, (plain, traced) in measure(trees, root, options.count, options.runs).items():
            per_call = (traced - plain) / calls * 1e6
            print(f"{label:10} {options.arch}: {calls} calls, CPU {plain:.2f} s plain, "
                  f"{traced:.2f} s with --strace: {per_call:.1f} us per strace line "
                  f"(medians of {options.runs})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
