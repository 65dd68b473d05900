#!/usr/bin/env python3
"""Build the sample programs reproducibly, or check the committed binaries.

    python samples/build.py                 build all samples into samples/bin/
    python samples/build.py --only fib      build one sample (repeatable)
    python samples/build.py --check         rebuild into a temporary folder and
                                            compare bytes with samples/bin/
    python samples/build.py --only dyn/tls  one dynamically linked sample (build_dyn.py:
                                            samples/dyn/ against glibc, PIE and non-PIE)

Each samples/NAME.c becomes samples/bin/i386/NAME (zig target x86-linux-musl)
and samples/bin/x86_64/NAME (x86_64-linux-musl): static, non-PIE, frame
pointers kept, symbol table kept, DWARF stripped.  samples/bin/SHA256SUMS lists
every binary in sha256sum format.

Reproducibility: the compiler is the pinned `ziglang` wheel (setup.cfg extra
`samples`), run with its caches in a fresh temporary folder; sources are passed
by relative name from samples/; the link has no build-id; zig's linker (LLD)
writes no timestamps.  Debug sections are removed with objcopy --strip-debug
because zig cc turns every strip request (-s, -S, --strip-debug) into a full
strip that also drops .symtab, which probes need.  The first build for each
target compiles musl first, which takes most of its time.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import elfcheck

SAMPLES_DIR = Path(__file__).resolve().parent
BIN_DIR = SAMPLES_DIR / "bin"
SUMS_NAME = "SHA256SUMS"

# arch directory -> zig target triple
TARGETS = {"i386": "x86-linux-musl", "x86_64": "x86_64-linux-musl"}

CFLAGS = [
    "-std=c11",
    "-O1",  # readable code; fib's shape is pinned by its attributes
    "-static", "-fno-pie", "-no-pie",  # ET_EXEC at fixed addresses, no ld.so
    "-fno-omit-frame-pointer", "-mno-omit-leaf-frame-pointer",  # unwinding, US 7,350,196
    # Keep `push %ebp; mov %esp,%ebp` as the first instructions of every
    # function: LLVM's shrink-wrapping would sink the prologue below early
    # returns, and entry probes patch the prologue.
    "-mllvm", "-enable-shrink-wrap=false",
    # Every function of a sample stays a real function with its own symbol,
    # so probes can name it.  (The samples also give their helpers external
    # linkage: LLVM silently moves internal i386 functions to a register
    # calling convention, which would hide their arguments from probes.)
    "-fno-inline",
    "-fno-stack-protector",  # no canary loads from TLS in the probed prologues
    "-g0",
    "-Wall", "-Wextra", "-Werror",
    "-Wl,--build-id=none",  # the build-id would hash paths of the cache dir
]


# Samples built from another sample's source with extra flags, appended after CFLAGS (the last
# flag wins): callchain_nofp is callchain without frame pointers, as Debian builds its code, for
# the profiler's CFI unwinder (issue 18). Their functions do not start with the frame-pointer
# prologue, so elfcheck does not ask for it.
VARIANTS = {
    "callchain_nofp": ("callchain", ["-fomit-frame-pointer", "-momit-leaf-frame-pointer"]),
}


class BuildError(Exception):
    """A sample failed to build or to pass its structural checks."""


def sample_names() -> list[str]:
    return sorted([p.stem for p in SAMPLES_DIR.glob("*.c")] + list(VARIANTS))


def source_and_flags(name: str) -> tuple[str, list[str]]:
    """The C file a sample is built from and the flags it adds to CFLAGS."""
    base, extra = VARIANTS.get(name, (name, []))
    return f"{base}.c", list(extra)


def find_objcopy() -> str:
    for tool in ("objcopy", "llvm-objcopy"):
        found = shutil.which(tool)
        if found:
            return found
    raise BuildError("objcopy not found: install binutils (apt-get install binutils)")


def zig_env(cache_dir: Path) -> dict[str, str]:
    """The environment for zig: caches under cache_dir, no inherited compiler flags."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ZIG_") and k not in ("CFLAGS", "LDFLAGS", "CPATH", "LIBRARY_PATH")}
    env["ZIG_GLOBAL_CACHE_DIR"] = str(cache_dir / "global")
    env["ZIG_LOCAL_CACHE_DIR"] = str(cache_dir / "local")
    return env


def compile_sample(name: str, arch: str, out_path: Path, work: Path, objcopy: str) -> None:
    """zig cc NAME.c -> unstripped temp file -> objcopy --strip-debug -> out_path."""
    unstripped = work / f"{name}.{arch}.full"
    source, extra = source_and_flags(name)
    cmd = [sys.executable, "-m", "ziglang", "cc", "-target", TARGETS[arch], *CFLAGS, *extra,
           f"-ffile-prefix-map={SAMPLES_DIR}=.", source, "-o", str(unstripped)]
    _run(cmd, cwd=SAMPLES_DIR, env=zig_env(work / "zig-cache"), what=f"{arch}/{name}: zig cc")
    out_path.parent.mkdir(parents=True, exist_ok=True)
    _run([objcopy, "--strip-debug", str(unstripped), str(out_path)], cwd=work, env=None,
         what=f"{arch}/{name}: objcopy")
    out_path.chmod(0o755)
    unstripped.unlink()


def _run(cmd: list[str], cwd: Path, env: dict[str, str] | None, what: str) -> None:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        detail = (proc.stderr or proc.stdout).strip().splitlines()
        raise BuildError(f"{what} failed: {detail[0] if detail else 'exit %d' % proc.returncode}"
                         + ("".join("\n    " + line for line in detail[1:20])))


def verify_sample(path: Path, arch: str, name: str, host_paths: list[Path]) -> None:
    """Structural checks, plus: no host path of the build may appear in the bytes."""
    source_name, extra = source_and_flags(name)
    source = (SAMPLES_DIR / source_name).read_text()
    problems = elfcheck.check_sample(str(path), arch, name, source,
                                     frame_pointers="-fomit-frame-pointer" not in extra)
    data = path.read_bytes()
    problems += [f"contains the host path {p}" for p in host_paths if os.fsencode(p) in data]
    if problems:
        raise BuildError(f"{arch}/{name}: " + "; ".join(problems))


def build_target(arch: str, names: list[str], out_dir: Path, work: Path) -> None:
    """Build names for one target into out_dir/ARCH/NAME, printing progress."""
    objcopy = find_objcopy()
    zig_dir = Path(importlib.util.find_spec("ziglang").origin).parent
    host_paths = [SAMPLES_DIR, work, zig_dir]
    for index, name in enumerate(names, 1):
        out_path = out_dir / arch / name
        started = time.monotonic()  # progress display only, never in outputs
        compile_sample(name, arch, out_path, work, objcopy)
        verify_sample(out_path, arch, name, host_paths)
        print(f"[{arch} {index}/{len(names)}] {name}: {out_path.stat().st_size} bytes, "
              f"{time.monotonic() - started:.1f} s", flush=True)


def build_all(names: list[str], out_dir: Path, work: Path) -> None:
    """Build every target; the two targets build concurrently because each
    first compiles its own musl (the longest step, mostly single-threaded)."""
    print(f"building {len(names)} sample(s) for {', '.join(TARGETS)} "
          "(the first build of each target compiles libc first: the longest step)", flush=True)
    with ThreadPoolExecutor(max_workers=len(TARGETS)) as pool:
        futures = [pool.submit(build_target, arch, names, out_dir, work) for arch in TARGETS]
        for future in futures:
            future.result()  # re-raises a BuildError from either target


def sums_text(bin_dir: Path) -> str:
    """sha256sum-format lines for every binary under bin_dir, sorted by path."""
    lines = []
    for arch in sorted(TARGETS):
        for path in sorted((bin_dir / arch).glob("*")):
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            lines.append(f"{digest}  {arch}/{path.name}\n")
    return "".join(lines)


def compare_with_committed(names: list[str], fresh_dir: Path) -> list[str]:
    mismatches = []
    for arch in TARGETS:
        for name in names:
            committed, fresh = BIN_DIR / arch / name, fresh_dir / arch / name
            if not committed.exists():
                mismatches.append(f"{arch}/{name}: not committed in {BIN_DIR}")
            elif committed.read_bytes() != fresh.read_bytes():
                mismatches.append(f"{arch}/{name}: rebuild differs from the committed binary")
    sums_file = BIN_DIR / SUMS_NAME
    if not sums_file.exists() or sums_file.read_text() != sums_text(BIN_DIR):
        mismatches.append(f"{SUMS_NAME}: does not match the committed binaries")
    return mismatches


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="rebuild into a temporary folder and compare with samples/bin")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="build or check only this sample (repeatable)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    import build_dyn  # here, not at the top: build_dyn imports this module

    names, dyn_names = sample_names(), build_dyn.program_names()
    known = names + [f"dyn/{n}" for n in dyn_names]
    unknown = sorted(set(args.only or []) - set(known))
    if unknown:
        print(f"build.py: unknown sample(s): {', '.join(unknown)} (have: {', '.join(known)})",
              file=sys.stderr)
        return 2
    if args.only:
        names = sorted(n for n in args.only if not n.startswith("dyn/"))
        dyn_names = sorted(n[len("dyn/"):] for n in args.only if n.startswith("dyn/"))
    with tempfile.TemporaryDirectory(prefix="trapline-samples-") as tmp:
        work = Path(tmp)
        try:
            mismatches = []
            if args.check:
                if names:
                    build_all(names, work / "bin", work)
                    mismatches += compare_with_committed(names, work / "bin")
                if dyn_names:
                    build_dyn.build_all(dyn_names, work / "dyn-bin", work)
                    mismatches += build_dyn.compare_with_committed(dyn_names, work / "dyn-bin")
            else:
                if names:
                    build_all(names, BIN_DIR, work)
                    (BIN_DIR / SUMS_NAME).write_text(sums_text(BIN_DIR))
                if dyn_names:
                    build_dyn.build_all(dyn_names, build_dyn.DYN_BIN, work)
                    (build_dyn.DYN_BIN / SUMS_NAME).write_text(build_dyn.sums_text(build_dyn.DYN_BIN))
        # build_dyn raises the BuildError of `build` imported as a module, which is
        # another class than this script's own when build.py runs as __main__.
        except (BuildError, build_dyn.BuildError) as exc:
            print(f"\nbuild.py: {exc}", file=sys.stderr)
            return 1
    for line in mismatches:
        print(f"MISMATCH {line}", file=sys.stderr)
    if args.check and not mismatches:
        if names:
            print(f"check ok: {len(names) * len(TARGETS)} binaries match {BIN_DIR}")
        if dyn_names:
            count = len(build_dyn.output_names(dyn_names)) * len(build_dyn.TARGETS)
            print(f"check ok: {count} dynamic binaries match {build_dyn.DYN_BIN}")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
