"""bpftrace's one-liner tutorial, as far as it concerns user space and system calls, run
unchanged by `trapline trace -e` on the samples (both arches) and on the host's /bin/ls, with
the results checked against native oracles: Debian's strace -c for system-call counts and
gdb's breakpoint hit counts for uprobes, both run on the host."""
import os

import pytest

from tests.e2e.lang.lang_run import (ARCHES, GUEST_ENV, maps, native_breakpoint_hits,
                                     native_syscall_counts, sample, trace)
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e

# Calls the two sides cannot agree on: the first execve is strace's own (trapline's run starts
# in the new image) and strace -c counts no exit_group (it never returns).
NOT_COMPARED = {"execve", "exit_group"}
# /bin/ls on the host also: libselinux opens /proc/mounts in the sandbox only (after reading the
# modeled /proc/filesystems), and natively ls asks its output for TCGETS once more (ioctl).
LS_NOT_COMPARED = NOT_COMPARED | {"openat", "ioctl"}


@pytest.fixture(params=ARCHES)
def arch(request) -> str:
    return request.param


def test_hello_world(arch):
    done = trace("-e", 'BEGIN { printf("hello world\\n"); }', "--", sample(arch, "hello"))
    assert done.stdout.startswith("hello world\n")
    assert "Attaching 1 probe..." in done.stderr


# samples whose system calls are natively the same, call for call (tests/e2e/strace: IDENTICAL)
@pytest.mark.parametrize("name, args", [("hello", []), ("compute", []), ("fib", ["10"]),
                                        ("signals", [])])
@alternates("arch")
def test_syscall_counts_by_probe_equal_strace_c(arch, name, args, tmp_path):
    argv = [sample(arch, name), *args]
    done = trace("-e", "tracepoint:syscalls:sys_enter_* { @[probe] = count(); }", "--", *argv,
                 cwd=tmp_path)
    ours = {key.split("sys_enter_", 1)[1]: int(value) for key, value in maps(done.stdout)["@"].items()}
    native = native_syscall_counts(argv, cwd=tmp_path)
    compared = set(native) - NOT_COMPARED
    assert compared, native
    assert {n: ours.get(n, 0) for n in compared} == {n: native[n] for n in compared}
    assert set(ours) - NOT_COMPARED == compared


def test_syscall_counts_by_process_raw_syscalls(arch, tmp_path):
    argv = [sample(arch, "callchain")]
    done = trace("-e", "tracepoint:raw_syscalls:sys_enter { @[comm] = count(); }", "--", *argv,
                 cwd=tmp_path)
    native = native_syscall_counts(argv, cwd=tmp_path)
    # strace's execve is its own, not the program's; strace -c counts no exit_group, ours does
    assert maps(done.stdout)["@"] == {"callchain": str(sum(native.values()) - native["execve"] + 1)}


def test_files_opened_by_process(arch, tmp_path):
    """The tutorial's tracepoint:syscalls:sys_enter_openat with str(args.filename), on musl's
    open() (the samples' libc opens with open on both arches; glibc's openat: the ls test)."""
    call = "open"
    program = (f'tracepoint:syscalls:sys_enter_{call} {{ printf("%s %s\\n", comm, '
               'str(args.filename)); }')
    done = trace("-e", program, "--", sample(arch, "fileio"), cwd=tmp_path)
    opened = [line for line in done.stdout.splitlines() if line.startswith("fileio ")]
    assert "fileio data.txt" in opened and "fileio ." in opened, done.stdout
    assert len(opened) == native_syscall_counts([sample(arch, "fileio")], cwd=tmp_path)[call]


def test_files_opened_by_ls():
    program = 'tracepoint:syscalls:sys_enter_openat { printf("%s %s\\n", comm, str(args.filename)); }'
    done = trace("-e", program, "--", "/bin/ls", "/")
    opened = [line for line in done.stdout.splitlines() if line.startswith("ls /")]
    assert "ls /etc/ld.so.cache" in opened and any(line.endswith("/libc.so.6") for line in opened)


def test_read_sizes_on_ls_equal_strace(tmp_path):
    """tracepoint:syscalls:sys_exit_read { @bytes = hist(args.ret); } on the host's ls: the
    histogram holds as many reads as strace counts, and the failed ones sort below 0."""
    for index in range(5):
        (tmp_path / f"f{index}").write_text("x")
    done = trace("-e", "tracepoint:syscalls:sys_exit_read { @bytes = hist(args.ret); @n = count(); }",
                 "--", "/bin/ls", str(tmp_path))
    assert "@bytes:\n" in done.stdout and "[512, 1K)" in done.stdout
    native = native_syscall_counts(["/bin/ls", str(tmp_path)])
    assert int(maps(done.stdout)["@n"][""]) == native["read"]


def test_syscall_counts_of_ls_equal_strace_c(tmp_path):
    for index in range(7):
        (tmp_path / f"f{index}").mkdir()
    argv = ["/bin/ls", str(tmp_path)]
    done = trace("-e", "t:syscalls:sys_enter_* { @[probe] = count(); }", "--", *argv)
    ours = {key.split("sys_enter_", 1)[1]: int(value) for key, value in maps(done.stdout)["@"].items()}
    native = native_syscall_counts(argv)
    compared = set(native) - LS_NOT_COMPARED
    assert {"getdents64", "mmap", "write", "brk", "mprotect"} <= compared, native
    assert {n: ours.get(n, 0) for n in compared} == {n: native[n] for n in compared}


def test_uprobe_counts_equal_gdb_breakpoints(arch):
    argv = [sample(arch, "fib"), "10"]
    done = trace("-e", f"uprobe:{argv[0]}:fib {{ @calls = count(); @by[arg0] = count(); }} "
                 f"uretprobe:{argv[0]}:fib {{ @returned = sum(retval); }}", "--", *argv)
    found = maps(done.stdout)
    native = native_breakpoint_hits(argv, "fib")
    assert int(found["@calls"][""]) == native == 177
    assert sum(int(v) for v in found["@by"].values()) == native
    assert found["@by"]["10"] == "1" and found["@by"]["1"] == "55"
    # every call's result added up, as the recursion computes it
    assert found["@returned"][""] == str(_fib_results_sum(10))


def test_library_uprobe_on_ls_equals_gdb(tmp_path):
    """A libc function of the host's /bin/ls (dynamic, stripped): readdir64 per entry, and the
    wildcard form `uprobe:libc.so.6:readdir*` keyed by func."""
    for index in range(9):
        (tmp_path / f"e{index}").write_text("")
    argv = ["/bin/ls", str(tmp_path)]
    done = trace("-e", "uprobe:libc.so.6:readdir64 { @ = count(); } "
                 "uprobe:libc.so.6:readdir* { @w[func] = count(); }", "--", *argv)
    found = maps(done.stdout)
    native = native_breakpoint_hits(argv, "readdir64")
    assert int(found["@"][""]) == native
    assert sum(int(v) for v in found["@w"].values()) == native


def _fib_results_sum(n: int) -> int:
    total = 0

    def fib(k: int) -> int:
        nonlocal total
        value = k if k < 2 else fib(k - 1) + fib(k - 2)
        total += value
        return value
    fib(n)
    return total


def test_listing_probes(arch):
    binary = sample(arch, "fib")
    done = trace("-l", f"uprobe:{binary}:fi*")
    assert f"uprobe:{binary}:fib" in done.stdout.splitlines()
    assert all(line.startswith(f"uprobe:{binary}:fi") for line in done.stdout.splitlines())
    done = trace("-l", "tracepoint:syscalls:sys_enter_open*")
    assert "tracepoint:syscalls:sys_enter_openat" in done.stdout.splitlines()


def test_listing_a_programs_libraries():
    done = trace("-l", "uprobe:*libc.so.6:readdir*", "--", "/bin/true")
    lines = done.stdout.splitlines()
    assert lines and all("libc.so.6:readdir" in line for line in lines)
    assert any(line.endswith(":readdir64") for line in lines)


def test_the_guest_environment_is_the_oracles():
    """The native runs get the sandbox's default environment (trapline/sandbox.py)."""
    from trapline.sandbox import DEFAULT_ENV
    assert {k: v for k, v in DEFAULT_ENV if k != "PWD"} == GUEST_ENV
    assert os.path.exists("/bin/ls")
