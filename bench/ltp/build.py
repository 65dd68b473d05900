"""Build LTP's syscall tests from the release tarball, static, per architecture.

LTP's own recipe (its INSTALL): `make autotools`, `./configure`, then make. Only the test
library (lib/) and testcases/kernel/syscalls are built (the libs/ a test needs, LTPLIBS, are
built by its Makefile), with -k so that one test that does not compile on this host leaves the
others. x86-64 is the host compiler's default; i386 is `gcc -m32` (Debian's gcc-multilib and
libc6-dev-i386). Every binary is linked -static, so the guest needs no loader or libc.

The build lives in a cache folder outside the repository (default ~/.cache/trapline-ltp):
src-ARCH/ is the built tree, bin-ARCH/ holds a link to every test executable by name (what LTP's
`make install` puts in testcases/bin, which tests find helpers in through PATH), and
built-ARCH marks a finished build.
"""
import os
import shutil
import subprocess
import tarfile
from pathlib import Path

TARBALL_NAME = "ltp-20260529.tar.xz"
APT_PACKAGES = ("autoconf", "automake", "m4", "libtool", "make", "pkg-config", "bison", "flex")
APT_I386 = ("gcc-multilib", "libc6-dev-i386")
FLAGS = {"x86_64": {"LDFLAGS": "-static"},
         "i386": {"CFLAGS": "-m32", "LDFLAGS": "-m32 -static", "CC": "gcc -m32"}}


def default_tarball(repo: Path) -> Path:
    """The tarball in shared/ltp/ beside the project root or beside one of its parents (a
    worktree sits deeper than the main checkout)."""
    for folder in (repo, *repo.parents):
        candidate = folder.parent / "shared" / "ltp" / TARBALL_NAME
        if candidate.is_file():
            return candidate
    return repo.parent / "shared" / "ltp" / TARBALL_NAME


def install_tools(arch: str, log) -> None:
    """Debian's autotools (and the i386 libc for -m32) through apt, when missing."""
    missing = [p for p in APT_PACKAGES + (APT_I386 if arch == "i386" else ())
               if subprocess.run(["dpkg", "-s", p], capture_output=True).returncode != 0]
    if missing:
        log(f"apt-get install {' '.join(missing)}")
        subprocess.run(["apt-get", "install", "-y", *missing], check=True, capture_output=True)


def build(tarball: Path, cache: Path, arch: str, jobs: int, log) -> Path:
    """The folder of test executables for `arch`, building them first if needed."""
    bin_dir = cache / f"bin-{arch}"
    if (cache / f"built-{arch}").exists():
        return bin_dir
    if not tarball.is_file():
        raise SystemExit(f"ltp: no LTP tarball at {tarball} (give --tarball)")
    install_tools(arch, log)
    src = cache / f"src-{arch}"
    if not (src / "configure").exists():
        _extract(tarball, src, log)
        _run(["make", "autotools"], src, {}, cache / f"autotools-{arch}.log", log)
        _run(["./configure"], src, FLAGS[arch], cache / f"configure-{arch}.log", log)
    make_log = cache / f"build-{arch}.log"
    _run(["make", f"-j{jobs}", "-C", "lib"], src, FLAGS[arch], make_log, log)
    # -k: a test this host cannot build must not stop the others (its runs count as not built)
    _run(["make", f"-j{jobs}", "-k", "-C", "testcases/kernel/syscalls"], src, FLAGS[arch], make_log,
         log, check=False)
    link_executables(src / "testcases" / "kernel" / "syscalls", bin_dir)
    (cache / f"built-{arch}").write_text(str(tarball) + "\n")
    return bin_dir


def link_executables(tree: Path, bin_dir: Path) -> None:
    """bin_dir/NAME -> every executable file under tree (the tests and their helpers)."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    for path in sorted(tree.rglob("*")):
        if path.is_file() and os.access(path, os.X_OK) and path.suffix not in (".sh", ".o", ".c") \
                and not (bin_dir / path.name).exists():
            (bin_dir / path.name).symlink_to(path)


def _extract(tarball: Path, src: Path, log) -> None:
    log(f"extracting {tarball.name} into {src}")
    shutil.rmtree(src, ignore_errors=True)
    src.mkdir(parents=True)
    with tarfile.open(tarball) as archive:
        top = archive.getmembers()[0].name.split("/")[0]
        archive.extractall(src.parent / f".extract-{src.name}", filter="tar")
    extracted = src.parent / f".extract-{src.name}" / top
    src.rmdir()
    extracted.rename(src)
    shutil.rmtree(src.parent / f".extract-{src.name}")


def _run(argv, cwd: Path, flags: dict, log_file: Path, log, check: bool = True) -> None:
    log(f"{' '.join(argv)} (log: {log_file})")
    env = dict(os.environ, **flags)
    with open(log_file, "a") as out:
        done = subprocess.run(argv, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    if check and done.returncode != 0:
        raise SystemExit(f"ltp: {' '.join(argv)} failed (exit {done.returncode}); see {log_file}")
