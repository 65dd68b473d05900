"""A small C program of a test built as the host's gcc builds it (static, -O1): for tests whose
guest must contain one exact instruction sequence or behaviour no sample has, or whose output is
compared with the same program's native run.

Most of the compared programs are a list of calls, each printed by `result(what, r)` as its
name, its return value and errno's name: `c_preamble` is that printer with the headers such a
program needs, and `compare_with_native` the test's body (run natively, check the native output
shows the case the test is about, then the sandbox must print the same bytes)."""
import subprocess
from pathlib import Path

from tests.e2e.host_tools import ensure_gcc_m32
from tests.e2e.sandbox_runner import Result, run_sandbox

# The headers nearly every such program uses; _GNU_SOURCE first, for strerrorname_np (glibc
# 2.32) and the Linux-only calls.
_HEADERS = ("errno.h", "fcntl.h", "stdio.h", "stdlib.h", "string.h", "sys/stat.h", "unistd.h")


def c_preamble(label: str = "%-26s ", shown: str = "r") -> str:
    """The start of a program: `#define _GNU_SOURCE`, _HEADERS, and
    `static void result(const char *what, long r)`, which prints `what` with the printf format
    `label`, then -1 and errno's name (EBADF...) for a negative `r`, else the C expression
    `shown` of `r` (an fd number that may differ is shown as a class, a length as 0)."""
    includes = "".join(f"#include <{header}>\n" for header in _HEADERS)
    return (f"#define _GNU_SOURCE\n{includes}\n"
            "static void result(const char *what, long r) {\n"
            f'    printf("{label}%ld %s\\n", what, r < 0 ? -1L : (long)({shown}),\n'
            '           r < 0 ? strerrorname_np(errno) : "");\n'
            "}\n")


def compare_with_native(program: Path, *shown: bytes, timeout: float = 60) -> Result:
    """Run `program` natively (it must exit 0 and print every one of `shown`: the cases the test
    is about were reached on this host), then in the sandbox against the host's root: the same
    stdout, byte for byte. Returns the sandbox's run."""
    native = subprocess.run([str(program)], capture_output=True, check=True, timeout=timeout)
    for text in shown:
        assert text in native.stdout, f"the native run does not print {text!r}:\n{native.stdout}"
    result = run_sandbox([str(program)], rootfs=None)
    assert result.stdout == native.stdout, result.describe()
    return result


def build_static(tmp_path_factory, name: str, source: str, flags: tuple[str, ...] = (),
                 arch: str = "x86_64") -> Path:
    """`flags`: more gcc options (`-g` for a test that needs DWARF); `arch` "i386" builds with -m32
    (installing gcc-multilib on first need)."""
    if arch == "i386":
        ensure_gcc_m32()
        flags = ("-m32", *flags)
    where = tmp_path_factory.mktemp(name)
    (where / f"{name}.c").write_text(source)
    subprocess.run(["gcc", "-O1", "-static", *flags, "-o", name, f"{name}.c"], cwd=where, check=True)
    return where / name


# A test program's C function: a process's state letter in /proc/PID/stat ('S' once it sleeps),
# so a child signals its parent only when the parent is asleep in the call under test, whatever
# the host's speed (fs/proc/array.c do_task_stat: the state follows the last ')' of the name).
STATE_OF_C = r"""
static char state_of(pid_t pid)
{
    char path[64], text[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    FILE *stat = fopen(path, "r");
    size_t got = stat ? fread(text, 1, sizeof text - 1, stat) : 0;
    if (stat) fclose(stat);
    text[got] = 0;
    char *end = strrchr(text, ')');
    return end && end[1] ? end[2] : '?';
}
"""
