#!/usr/bin/env python3
"""Build the sample handlers: samples/handlers/NAME.c -> ARCH/NAME.o (both arches), and
limit_n.c -> ARCH/limit_n.so too (a shared object's function as a handler).

    python samples/handlers/build.py            build
    python samples/handlers/build.py --check    rebuild in a temporary folder, compare bytes

Relocatable, position-independent, hidden visibility (so that i386 reaches its data GOT-
relative and x86-64 PC-relative: instrumenter/strategies/handlers/object_file.py), no unwind tables,
no debug info; the pinned `ziglang` wheel, run from this folder with relative names.
"""
import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = ("limit_n",)
TARGETS = {"i386": "x86-linux-musl", "x86_64": "x86_64-linux-musl"}
CFLAGS = ["-c", "-std=c11", "-O1", "-fPIC", "-fvisibility=hidden", "-fno-stack-protector",
          "-fno-asynchronous-unwind-tables", "-fno-unwind-tables", "-g0", "-ffreestanding",
          "-Wall", "-Wextra", "-Werror"]


def build(out: Path) -> list[Path]:
    built = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, ZIG_GLOBAL_CACHE_DIR=cache, ZIG_LOCAL_CACHE_DIR=cache)
        for source in sorted(HERE.glob("*.c")):
            for arch, target in TARGETS.items():
                (out / arch).mkdir(parents=True, exist_ok=True)
                dest = out / arch / (source.stem + ".o")
                subprocess.run([sys.executable, "-m", "ziglang", "cc", "-target", target, *CFLAGS,
                                source.name, "-o", str(dest)], cwd=HERE, env=env, check=True)
                built.append(dest.relative_to(out))
                if source.stem in SHARED:
                    so = dest.with_suffix(".so")
                    subprocess.run([sys.executable, "-m", "ziglang", "cc", "-target", target,
                                    *CFLAGS[1:], "-shared", "-nostdlib", "-Wl,--build-id=none",
                                    source.name, "-o", str(so)], cwd=HERE, env=env, check=True)
                    built.append(so.relative_to(out))
    return built


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    if not args.check:
        build(HERE)
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        differ = [str(p) for p in build(Path(tmp))
                  if (Path(tmp) / p).read_bytes() != (HERE / p).read_bytes()]
    if differ:
        print("differ from the committed objects: " + ", ".join(differ), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
