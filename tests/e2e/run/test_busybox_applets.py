"""Debian's static busybox under trapline behaves exactly as it does natively.

Each case is ONE guest process (no shell pipelines: a shell would need fork), run once in
the sandbox and once natively chrooted into the same rootfs (sandbox_runner.py); stdout,
exit status and, where deterministic, stderr must be identical. Cases that change the
file system run on private copies of the rootfs (the sandbox with --writable) and then
compare the resulting trees.

Things native and sandboxed runs legitimately disagree on are normalised on BOTH sides,
never on one: owner/group columns (the native reference runs as root, the sandbox may
present another guest identity), block counts and directory sizes (host file system
details), member order inside a tar archive (busybox archives in readdir order, which
the sandbox defines deterministically while the host does not), and dd's transfer-rate
line (host wall-clock time).
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import stat
import tarfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

import pytest

from tests.e2e.conftest import LINES
from tests.e2e.debian_bins import ARCHES
from tests.e2e.sandbox_runner import (
    FIXED_ENV,
    assert_same_behaviour,
    check_native_oracle,
    run_native,
    run_sandbox,
)
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e

BB = "/bin/busybox"


def normalize_long_listing(output: bytes) -> bytes:
    """``ls -l`` output without what belongs to the host rather than to the rootfs content.

    Dropped on both sides: the owner and group columns; the "total" line (allocated
    blocks) and, for directories, size and link count: these depend on the host file
    system (ext4, tmpfs and btrfs all differ), which the sandbox may replace by values of
    its own to keep results identical on any machine.
    """
    long_line = re.compile(rb"^([-dlcbps][-rwxsStT]{9})\s+(\d+)\s+\S+\s+\S+\s+(\d+)(\s.*)$")

    def clean(line: bytes) -> bytes:
        match = long_line.match(line)
        if not match:
            return line
        mode, links, size, rest = match.groups()
        if mode.startswith(b"d"):
            links = size = b"-"
        return b"%s %s %s%s" % (mode, links, size, rest)

    lines = output.split(b"\n")
    return b"\n".join(clean(line) for line in lines if not line.startswith(b"total "))


def canonical_tar_listing(output: bytes) -> bytes:
    """One line per archive member (sorted), everything but ownership and order."""
    try:
        with tarfile.open(fileobj=io.BytesIO(output), mode="r:") as archive:
            members = sorted(archive.getmembers(), key=lambda m: m.name)
            lines = [_describe_member(archive, member) for member in members]
    except tarfile.TarError as error:
        return b"<not a tar archive: %s> " % str(error).encode() + output[:64]
    return "".join(lines).encode()


def _describe_member(archive: tarfile.TarFile, member: tarfile.TarInfo) -> str:
    data = archive.extractfile(member).read() if member.isfile() else b""
    return (
        f"{member.name} type={member.type!r} mode={member.mode:o} size={member.size} "
        f"mtime={member.mtime} link={member.linkname!r} "
        f"sha256={hashlib.sha256(data).hexdigest()[:16]}\n"
    )


@dataclass(frozen=True)
class Case:
    id: str
    argv: tuple[str, ...]
    stdin: bytes = b""
    status: int = 0  # what busybox returns natively; checked so the oracle is sane
    compare_stderr: bool = True
    normalize: Callable[[bytes], bytes] | None = None
    cwd: str = "/"


CASES = (
    Case("cat", (BB, "cat", "/work/lines.txt")),
    Case("cat-stdin", (BB, "cat"), stdin=b"from stdin\n"),
    Case("cat-missing", (BB, "cat", "/work/nope"), status=1),
    Case("wc", (BB, "wc", "/work/lines.txt")),
    Case("wc-stdin", (BB, "wc", "-l", "-w"), stdin=LINES.encode()),
    Case("wc-blob", (BB, "wc", "-c", "/work/blob.bin")),
    Case("sort", (BB, "sort", "/work/lines.txt")),
    Case("sort-numeric-key", (BB, "sort", "-t", " ", "-k2,2n", "-k1,1r", "/work/lines.txt")),
    Case("sort-stdin-unique", (BB, "sort", "-u", "-r"), stdin=LINES.encode()),
    Case("uniq", (BB, "uniq", "-c", "/work/sorted.txt")),
    Case("uniq-duplicates", (BB, "uniq", "-d", "/work/sorted.txt")),
    Case("head", (BB, "head", "-n", "3", "/work/lines.txt")),
    Case("head-bytes", (BB, "head", "-c", "100", "/work/blob.bin")),
    Case("tail", (BB, "tail", "-n", "2", "/work/lines.txt")),
    Case("tail-bytes", (BB, "tail", "-c", "300", "/work/blob.bin")),
    Case("od", (BB, "od", "-A", "x", "-t", "x1", "-c", "-N", "64", "/work/blob.bin")),
    Case("od-skip", (BB, "od", "-A", "d", "-t", "u2", "-j", "1000000", "-N", "32", "/work/blob.bin")),
    # dd reports elapsed time and throughput on stderr: host time, so not compared.
    Case("dd", (BB, "dd", "if=/work/blob.bin", "of=/dev/stdout", "bs=4096", "count=3", "skip=5"),
         compare_stderr=False),
    Case("dd-stdin", (BB, "dd", "bs=7", "count=2"), stdin=b"0123456789abcdefghij",
         compare_stderr=False),
    Case("sha256sum", (BB, "sha256sum", "/work/blob.bin", "/work/lines.txt")),
    Case("md5sum", (BB, "md5sum", "/work/lines.txt", "/work/tree/sub/deeper/d.bin")),
    Case("md5sum-stdin", (BB, "md5sum"), stdin=b"abc"),
    Case("tr", (BB, "tr", "a-z", "A-Z"), stdin=LINES.encode()),
    Case("tr-squeeze", (BB, "tr", "-s", "a-z"), stdin=b"aabb 1223 ccdd\n"),
    Case("tr-delete", (BB, "tr", "-d", "0-9"), stdin=b"aabb 1223 ccdd\n"),
    Case("cut", (BB, "cut", "-d", " ", "-f", "1,3", "/work/lines.txt")),
    Case("cut-chars", (BB, "cut", "-c", "2-5", "/work/lines.txt")),
    Case("awk-sum", (BB, "awk", "{ s += $2 } END { print s, NR, s / NR }", "/work/lines.txt")),
    Case("awk-printf", (BB, "awk", 'BEGIN { printf "%.3f %e %5s|%-5d|\\n", 22/7, 1e10/3, "x", 42 }')),
    # Floating point as Linux starts it (x87 FCW 0x037f, MXCSR 0x1f80): with FCW 0 the i386
    # sum rounds to float once int() reloads the control word (7.485478, not 7.485471).
    Case("awk-harmonic", (BB, "awk", 'BEGIN { x = 0; for (i = 1; i <= 1000; i++) { x += 1 / i; '
                                     'n = int(x) } printf "%.6f %.17g %.17g %d\\n", x, x / 7, 1 / 3, n }')),
    Case("awk-fields", (BB, "awk", "-F", " ", "$3 == \"red\" { print NR \": \" toupper($1) }",
                        "/work/lines.txt")),
    Case("sed-substitute", (BB, "sed", "-n", "s/red/RED/p", "/work/lines.txt")),
    Case("sed-script", (BB, "sed", "2d;4q", "/work/lines.txt")),
    Case("sed-regex", (BB, "sed", "-E", "s/^([a-z]+) ([0-9]+)/\\2:\\1/", "/work/lines.txt")),
    Case("grep", (BB, "grep", "-n", "red", "/work/lines.txt")),
    Case("grep-count-invert", (BB, "grep", "-c", "-v", "a", "/work/lines.txt")),
    Case("grep-extended", (BB, "grep", "-E", "^(apple|fig) [0-9]+", "/work/lines.txt")),
    Case("grep-no-match", (BB, "grep", "kiwi", "/work/lines.txt"), status=1),
    Case("grep-recursive", (BB, "grep", "-r", "-l", "bravo", "/work/tree")),
    Case("seq", (BB, "seq", "1", "3", "20")),
    Case("seq-width", (BB, "seq", "-w", "8", "11")),
    Case("printf", (BB, "printf", "%05d|%x|%o|%s|%c|%%\\n", "42", "255", "8", "hi", "z")),
    Case("echo", (BB, "echo", "-e", "a\\tb\\x41")),
    Case("env", (BB, "env")),
    Case("date", (BB, "date", "-d", "2021-03-04 05:06:07", "+%Y-%m-%d %H:%M:%S %j %a %b %s %Z")),
    Case("date-epoch", (BB, "date", "-u", "-d", "@1234567890", "+%F %T %u %V")),
    Case("stat", (BB, "stat", "-c", "%s %n %F %a", "/work/lines.txt", "/work/tree/link",
                  "/work/tree/run.sh")),
    # A directory's size is a property of the host file system: not printed.
    Case("stat-dir", (BB, "stat", "-c", "%n %F %a %Y", "/work/tree")),
    Case("ls", (BB, "ls", "-1", "/work/tree")),
    Case("ls-recursive-classify", (BB, "ls", "-1RF", "/work/tree")),
    Case("ls-long", (BB, "ls", "-la", "--full-time", "/work/tree"), normalize=normalize_long_listing),
    Case("ls-cwd", (BB, "ls", "-1a"), cwd="/work/tree/sub"),
    Case("ls-missing", (BB, "ls", "/work/nope"), status=1),
    Case("test-file", (BB, "test", "-f", "/work/lines.txt")),
    Case("test-not-dir", (BB, "test", "-d", "/work/lines.txt"), status=1),
    Case("test-arith", (BB, "test", "3", "-lt", "2"), status=1),
    Case("test-bracket", ("/bin/[", "abc", "=", "abc", "]")),
    Case("expr-mul", (BB, "expr", "6", "*", "7")),
    Case("expr-false", (BB, "expr", "1", "=", "2"), status=1),
    Case("expr-string", (BB, "expr", "substr", "hello-world", "4", "5")),
    # 64-bit division: on i386 libgcc's __udivmoddi4 per trial divisor, with its arguments and
    # saved registers on the stack (the store-heavy code emu/tlb.py keeps off Unicorn's slow path).
    Case("factor-64-bit", (BB, "factor", "18446744073709551615", "100000000000031")),
    Case("basename", (BB, "basename", "/a/b/c.txt", ".txt")),
    Case("dirname", (BB, "dirname", "/a/b/c.txt")),
    Case("tar-list", (BB, "tar", "-tf", "/work/tree.tar")),
    Case("tar-list-verbose", (BB, "tar", "-tvf", "/work/tree.tar")),
    Case("tar-extract-stdout", (BB, "tar", "-xOf", "/work/tree.tar", "tree/b.txt")),
    Case("tar-create", (BB, "tar", "-cf", "-", "-C", "/work", "tree"),
         normalize=canonical_tar_listing),
    # argv[0] is an applet symlink: busybox dispatches on its basename.
    Case("symlink-cat", ("/bin/cat", "/work/tree/a.txt")),
    Case("symlink-sha256sum", ("/bin/sha256sum", "/work/lines.txt")),
    Case("symlink-ls", ("/bin/ls", "-1", "/work")),
    # env runs another applet by re-executing busybox through /proc/self/exe
    # (Debian builds with FEATURE_PREFER_APPLETS): exec of /proc/self/exe, no fork.
    Case("reexec-env", (BB, "env", "-i", "A=1", "B=two", "env")),
    Case("reexec-env-cat", ("/bin/env", "-", "cat", "/work/tree/a.txt")),
    Case("busybox-usage", (BB,)),
    Case("busybox-list", (BB, "--list")),
    Case("busybox-no-applet", (BB, "nosuchapplet"), status=127),
)


def _params(cases):
    return [pytest.param(case, id=case.id) for case in cases]


@pytest.mark.parametrize("case", _params(CASES))
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_applet_matches_native(arch, case, rootfs_for, native_arch):
    native = run_native(
        list(case.argv), rootfs_dir=rootfs_for(native_arch[arch]), cwd=case.cwd,
        env=FIXED_ENV, stdin=case.stdin,
    )
    check_native_oracle(native, case.status)
    sandbox = run_sandbox(
        list(case.argv), rootfs=rootfs_for(arch), cwd=case.cwd, env=FIXED_ENV,
        clear_env=True, stdin=case.stdin,
    )
    if case.normalize:
        native = _normalized(native, case.normalize)
        sandbox = _normalized(sandbox, case.normalize)
    assert_same_behaviour(sandbox, native, stderr=case.compare_stderr)


def _normalized(result, normalize):
    return replace(result, stdout=normalize(result.stdout))


# --- cases that change the file system --------------------------------------------------


@dataclass(frozen=True)
class TreeCase:
    """One command run on private rootfs copies; /work and /tmp are compared afterwards."""

    id: str
    argv: tuple[str, ...]
    status: int = 0
    compare_stderr: bool = True
    # Only where the command itself sets times (tar restores file mtimes, cp -p copies
    # them); otherwise new files get the current time, host wall clock natively.
    compare_file_mtimes: bool = False


TREE_CASES = (
    TreeCase("mkdir", (BB, "mkdir", "/work/new")),
    TreeCase("mkdir-parents-mode", (BB, "mkdir", "-p", "-m", "700", "/tmp/a/b/c")),
    TreeCase("mkdir-exists", (BB, "mkdir", "/work/tree"), status=1),
    TreeCase("cp", (BB, "cp", "/work/lines.txt", "/tmp/copy.txt")),
    TreeCase("cp-recursive", (BB, "cp", "-r", "/work/tree", "/tmp/tree2")),
    TreeCase("cp-preserve", (BB, "cp", "-p", "/work/tree/run.sh", "/work/tree/b.txt", "/tmp"),
             compare_file_mtimes=True),
    TreeCase("cp-overwrite", (BB, "cp", "/work/tree/a.txt", "/work/lines.txt")),
    TreeCase("mv-file", (BB, "mv", "/work/tree/a.txt", "/work/moved.txt")),
    TreeCase("mv-dir", (BB, "mv", "/work/tree/sub", "/tmp/sub")),
    TreeCase("rm", (BB, "rm", "/work/tree/b.txt", "/work/tree/link")),
    TreeCase("rm-recursive", (BB, "rm", "-r", "/work/tree")),
    TreeCase("rm-missing", (BB, "rm", "/work/nope"), status=1),
    TreeCase("ln-symbolic", (BB, "ln", "-s", "../work/lines.txt", "/tmp/lines-link")),
    TreeCase("ln-hard", (BB, "ln", "/work/lines.txt", "/tmp/lines-hard")),
    TreeCase("dd-to-file", (BB, "dd", "if=/work/blob.bin", "of=/tmp/part.bin", "bs=1000",
                            "count=7", "skip=3"), compare_stderr=False),
    TreeCase("tar-extract", (BB, "tar", "-xf", "/work/tree.tar", "-C", "/tmp"),
             compare_file_mtimes=True),
    TreeCase("tar-create-file", (BB, "tar", "-cf", "/tmp/out.tar", "-C", "/work", "tree")),
    TreeCase("symlink-mkdir", ("/bin/mkdir", "-p", "/tmp/x/y")),
)


def snapshot_tree(top: Path, *, file_mtimes: bool) -> dict[str, tuple]:
    """What the guest can observe of the files under ``top``: kind, mode, links, content
    (or link target) and, if asked, file mtimes. Never ownership."""
    state = {}
    for folder, dirs, files in os.walk(top):
        dirs.sort()
        for name in sorted(dirs + files):
            path = Path(folder) / name
            info = path.lstat()
            entry = (stat.S_IFMT(info.st_mode), stat.S_IMODE(info.st_mode), info.st_nlink)
            if stat.S_ISLNK(info.st_mode):
                entry += (os.readlink(path),)
            elif stat.S_ISREG(info.st_mode):
                content = path.read_bytes()
                if name.endswith(".tar"):  # member order is readdir order: see the top
                    content = canonical_tar_listing(content)
                entry += (hashlib.sha256(content).hexdigest(),)
                entry += (info.st_mtime_ns,) if file_mtimes else ()
            state[str(path.relative_to(top))] = entry
    return state


def _tree_difference(sandbox_root: Path, native_root: Path, case: TreeCase) -> list[str]:
    problems = []
    for folder in ("work", "tmp"):
        ours = snapshot_tree(sandbox_root / folder, file_mtimes=case.compare_file_mtimes)
        theirs = snapshot_tree(native_root / folder, file_mtimes=case.compare_file_mtimes)
        for name in sorted(set(ours) | set(theirs)):
            if ours.get(name) != theirs.get(name):
                problems.append(
                    f"/{folder}/{name}: sandbox {_describe_entry(ours.get(name))}, "
                    f"native {_describe_entry(theirs.get(name))}"
                )
    return problems


def _describe_entry(entry: tuple | None) -> str:
    if entry is None:
        return "absent"
    kind, mode, links, *rest = entry
    kinds = {stat.S_IFREG: "file", stat.S_IFDIR: "dir", stat.S_IFLNK: "symlink"}
    details = " ".join(f"{value[:16]}" if isinstance(value, str) else str(value) for value in rest)
    return f"[{kinds.get(kind, oct(kind))} {mode:04o} nlink={links} {details}]".replace(" ]", "]")


@pytest.mark.parametrize("case", _params(TREE_CASES))
@pytest.mark.parametrize("arch", ARCHES)
@alternates("arch")
def test_file_system_change_matches_native(arch, case, fresh_rootfs, native_arch):
    native_root = fresh_rootfs(native_arch[arch], "native")
    native = run_native(list(case.argv), rootfs_dir=native_root, env=FIXED_ENV)
    check_native_oracle(native, case.status)
    sandbox_root = fresh_rootfs(arch, "sandbox")
    sandbox = run_sandbox(
        list(case.argv), rootfs=sandbox_root, env=FIXED_ENV, clear_env=True, writable=True
    )
    assert_same_behaviour(sandbox, native, stderr=case.compare_stderr)
    problems = _tree_difference(sandbox_root, native_root, case)
    assert not problems, "file trees differ after the run:\n" + "\n".join(problems)


@pytest.mark.parametrize("arch", ARCHES)
def test_writes_stay_in_overlay_without_writable(arch, fresh_rootfs, native_arch):
    """Default runs write to an in-memory overlay: the guest sees its change, the host not."""
    argv = [BB, "rm", "-r", "/work/tree"]
    native = run_native(argv, rootfs_dir=fresh_rootfs(native_arch[arch], "native"),
                        env=FIXED_ENV)
    check_native_oracle(native, 0)
    root = fresh_rootfs(arch, "sandbox")
    before = snapshot_tree(root, file_mtimes=True)
    sandbox = run_sandbox(argv, rootfs=root, env=FIXED_ENV, clear_env=True)
    assert_same_behaviour(sandbox, native)
    assert snapshot_tree(root, file_mtimes=True) == before, "the host rootfs was modified"
