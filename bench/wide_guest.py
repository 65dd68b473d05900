"""A bench-only guest with fib and thousands of cold functions: room for 10 000 probe sites
that the measured run never executes.

The committed samples are small (fib has ~5 000 instruction boundaries in all, printf and the
start-up code included, and those run). This guest is fib.c's fib plus COLD functions of about
ten instructions each, reachable only through a table that main walks when given a second
argument, so the linker keeps them and the benchmark never calls them. It is built with the
samples' own compiler flags (samples/build.py) into a cache directory keyed by the source's
hash, on first use (the first build of each target compiles musl: about a minute).
"""
import hashlib
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "samples"))     # build.py is a script: it imports its siblings
from build import CFLAGS, TARGETS, zig_env    # noqa: E402  (the samples' flags and toolchain)

COLD = 1600
CACHE = Path(tempfile.gettempdir()) / "trapline-bench"


def source(cold: int = COLD) -> str:
    """C source: fib as in samples/fib.c, `cold` functions, a table of them, and main."""
    lines = ["#include <stdio.h>", "#include <stdlib.h>", "",
             "__attribute__((noinline, disable_tail_calls))",
             "unsigned long fib(unsigned int n)",
             "{", "    if (n < 2)", "        return n;", "    return fib(n - 1) + fib(n - 2);", "}", ""]
    for i in range(cold):
        # Distinct constants keep the functions from being merged (identical code folding).
        lines += [f"unsigned long cold_{i}(unsigned long a, unsigned long b);",
                  f"unsigned long cold_{i}(unsigned long a, unsigned long b)",
                  f"{{ return ((a * {2 * i + 3}u) + b) ^ (a >> {i % 13 + 1}) ^ {i}u; }}"]
    lines += ["", "typedef unsigned long (*cold_fn)(unsigned long, unsigned long);",
              "cold_fn cold_table[] = {"]
    lines += [f"    cold_{i}," for i in range(cold)]
    lines += ["};", "",
              "int main(int argc, char **argv)", "{",
              "    unsigned int n = argc > 1 ? (unsigned int)strtoul(argv[1], NULL, 10) : 20;",
              "    unsigned long acc = fib(n);",
              "    if (argc > 2)          /* never in the benchmark: the cold code stays cold */",
              f"        for (unsigned int i = 0; i < {cold}; i++)",
              "            acc = cold_table[i](acc, i);",
              "    printf(\"fib(%u) = %lu\\n\", n, acc);",
              "    return 0;", "}", ""]
    return "\n".join(lines)


def build(arch: str, cold: int = COLD) -> Path:
    """The path of the wide guest for `arch`, built if the cache does not have it yet."""
    text = source(cold)
    digest = hashlib.sha256((text + " ".join(CFLAGS) + TARGETS[arch]).encode()).hexdigest()[:16]
    out = CACHE / f"{arch}-{digest}" / "wide"      # probe specs name the binary "wide"
    if out.exists():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    src = out.parent / "wide.c"
    src.write_text(text)
    cmd = [sys.executable, "-m", "ziglang", "cc", "-target", TARGETS[arch], *CFLAGS,
           str(src), "-o", str(out) + ".tmp"]
    proc = subprocess.run(cmd, cwd=CACHE, env=zig_env(CACHE / "zig-cache"),
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"building the wide guest for {arch} failed: {proc.stderr[-2000:]}")
    Path(str(out) + ".tmp").rename(out)
    return out
