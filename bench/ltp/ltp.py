"""The Linux Test Project's syscall tests, natively and under trapline (issue 32).

    python3 bench/ltp/ltp.py                         build (once) and run every test, both arches
    python3 bench/ltp/ltp.py --arch x86_64 --tests fork04,mmap01
    python3 bench/ltp/ltp.py --build-only --arch i386

Builds LTP from its release tarball (build.py; cached outside the repository), runs each test of
runtest/syscalls natively and, if it passes natively and is not excluded (excluded.toml, each
with its reason), under `trapline run`; prints "N of M natively-passing tests pass under
trapline" per arch, then the failures grouped by cause (causes.py). Native results are kept in
the cache (native-ARCH.json) so later runs only run trapline; --renative runs them again.
See README.md beside this file.
"""
import argparse
import json
import sys
import tomllib
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.ltp.build import build, default_tarball  # noqa: E402
from bench.ltp.causes import verdict  # noqa: E402
from bench.ltp.runner import REPO, read_runtest, run  # noqa: E402

HERE = Path(__file__).resolve().parent
ARCHES = ("x86_64", "i386")


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tarball", type=Path, default=default_tarball(REPO),
                   help="LTP release tarball (default: shared/ltp/ beside the project root)")
    p.add_argument("--cache", type=Path, default=Path.home() / ".cache" / "trapline-ltp",
                   help="build and results folder (default ~/.cache/trapline-ltp)")
    p.add_argument("--arch", default=",".join(ARCHES), help="x86_64, i386 or both (comma-separated)")
    p.add_argument("--tests", default="", help="only these tests (comma-separated runtest names)")
    p.add_argument("--first", type=int, default=0, help="only the first N tests of the list")
    p.add_argument("--every", type=int, default=1, help="only every Nth test (a quick sample)")
    p.add_argument("--jobs", type=int, default=2, help="make -j for the build")
    p.add_argument("--workers", type=int, default=1, help="tests run at once")
    p.add_argument("--timeout", type=float, default=120, help="native time limit per test, s")
    p.add_argument("--trapline-timeout", type=float, default=600, help="time limit under trapline, s")
    p.add_argument("--renative", action="store_true", help="run the native side again")
    p.add_argument("--build-only", action="store_true")
    p.add_argument("--json", type=Path, help="write every result here")
    p.add_argument("-v", "--verbose", action="store_true", help="print each test's result")
    args = p.parse_args(argv)
    args.arches = [a for a in args.arch.split(",") if a]
    if any(a not in ARCHES for a in args.arches):
        p.error(f"--arch: one of {', '.join(ARCHES)}")
    return args


def log(message: str) -> None:
    print(f"ltp: {message}", file=sys.stderr, flush=True)


def excluded() -> dict[str, str]:
    """Test name -> why it is not counted (excluded.toml)."""
    data = tomllib.loads((HERE / "excluded.toml").read_text())
    return {name: reason for group in data.values() for name, reason in group.items()}


def select(tests, args):
    if args.tests:
        wanted = set(args.tests.split(","))
        unknown = wanted - {name for name, _ in tests}
        if unknown:
            raise SystemExit(f"ltp: not in runtest/syscalls: {', '.join(sorted(unknown))}")
        tests = [t for t in tests if t[0] in wanted]
    tests = tests[::args.every]
    return tests[:args.first] if args.first else tests


def native_results(tests, bin_dir, ltp_root, args, arch) -> dict[str, int | None]:
    path = args.cache / f"native-{arch}.json"
    known = json.loads(path.read_text()) if path.exists() and not args.renative else {}
    todo = [(n, c) for n, c in tests if n not in known]

    def one(test):
        name, command = test
        outcome = run(command, bin_dir, ltp_root, args.timeout, under_trapline=False)
        return name, 0 if verdict(outcome.returncode, outcome.output) == "pass" else outcome.returncode or -1
    with ThreadPoolExecutor(args.workers) as pool:
        for index, (name, rc) in enumerate(pool.map(one, todo), 1):
            known[name] = rc
            if index % 50 == 0:
                log(f"{arch}: {index} of {len(todo)} run natively")
                path.write_text(json.dumps(known, indent=0, sort_keys=True))
    path.write_text(json.dumps(known, indent=0, sort_keys=True))
    return known


def run_arch(arch: str, args) -> dict:
    bin_dir = build(args.tarball, args.cache, arch, args.jobs, log)
    ltp_root = args.cache / f"src-{arch}"
    tests = select(read_runtest(ltp_root / "runtest" / "syscalls"), args)
    missing = [n for n, c in tests if "/" not in c[0] and not (bin_dir / c[0]).exists()]
    skip = excluded()
    left_out = sorted(n for n, _ in tests if n in skip)
    tests = [t for t in tests if t[0] not in missing and t[0] not in skip]
    native = native_results(tests, bin_dir, ltp_root, args, arch)
    counted = [(n, c) for n, c in tests if native.get(n) == 0]

    def one(test):
        name, command = test
        outcome = run(command, bin_dir, ltp_root, args.trapline_timeout, under_trapline=True)
        result = verdict(outcome.returncode, outcome.output)
        if args.verbose:
            log(f"{arch} {name}: {result}")
        return name, result, outcome.output[-4000:].decode(errors="replace")
    with ThreadPoolExecutor(args.workers) as pool:
        results = list(pool.map(one, counted))
    return {"arch": arch, "not_built": missing, "excluded": left_out,
            "native_failures": sorted(n for n, _ in tests if native.get(n) != 0),
            "results": {name: {"result": result, "tail": tail} for name, result, tail in results}}


def report(summary: dict) -> str:
    results = summary["results"]
    passed = sum(1 for r in results.values() if r["result"] == "pass")
    lines = [f"{summary['arch']}: {passed} of {len(results)} natively-passing tests pass under trapline"
             f" ({len(summary['native_failures'])} fail natively, {len(summary['excluded'])} excluded,"
             f" {len(summary['not_built'])} not built)"]
    groups = defaultdict(list)
    for name, r in results.items():
        if r["result"] != "pass":
            groups[r["result"]].append(name)
    for group, names in sorted(groups.items(), key=lambda g: (-len(g[1]), g[0])):
        lines.append(f"  {len(names):4d}  {group}: {' '.join(sorted(names))}")
    return "\n".join(lines)


def main(argv=None) -> int:
    args = parse_args(argv)
    args.cache.mkdir(parents=True, exist_ok=True)
    summaries = []
    for arch in args.arches:
        if args.build_only:
            build(args.tarball, args.cache, arch, args.jobs, log)
            continue
        summaries.append(run_arch(arch, args))
        print(report(summaries[-1]), flush=True)
    if args.json:
        args.json.write_text(json.dumps(summaries, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
