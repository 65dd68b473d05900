"""A small C program built with the host's gcc (-g -O0) for args.NAME in uprobes: the samples
are built by zig without DWARF (a -g sample came out ~1 MB with host paths), and gcc is on every
machine that runs the tests. `greet` takes each kind of parameter dwarf_args.py reads; `floats`
and `by_value` take what it refuses."""
import subprocess
from tests.e2e.host_tools import ensure_gcc_m32

SOURCE = r"""
#include <stdio.h>
typedef long long big_t;
enum colour { RED = -1, GREEN = 2 };
struct pair { long a, b; };

__attribute__((noinline)) int greet(int n, const char *name, unsigned char tag, big_t big,
                                    enum colour colour)
{
    return n + (int)name[0] + tag + (int)big + (int)colour;
}

__attribute__((noinline)) int floats(double scale, int after) { return (int)scale + after; }

__attribute__((noinline)) long by_value(struct pair pair, int after) { return pair.a + after; }

int main(void)
{
    int total = 0;
    total += greet(7, "alpha", 200, -3, RED);
    total += greet(-42, "beta", 1, 5000000000LL, GREEN);
    total += floats(1.5, 2);
    total += (int)by_value((struct pair){1, 2}, 3);
    printf("%d\n", total);
    return 0;
}
"""
# what main passes greet, in the order of the calls: (n, name, tag, big, colour)
GREET_CALLS = [(7, "alpha", 200, -3, -1), (-42, "beta", 1, 5000000000, 2)]
ARCH_FLAGS = {"x86_64": "-m64", "i386": "-m32"}


def build(directory, arch: str) -> str:
    """The program, built for `arch` in `directory` (a dynamic executable: glibc's, from the
    host); its path."""
    source = directory / "greet.c"
    source.write_text(SOURCE)
    binary = directory / f"greet-{arch}"
    if arch == "i386":
        ensure_gcc_m32()
    subprocess.run(["gcc", ARCH_FLAGS[arch], "-g", "-O0", "-o", str(binary), str(source)],
                   check=True, capture_output=True)
    return str(binary)
