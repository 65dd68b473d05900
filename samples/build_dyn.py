"""Build the dynamically linked samples (samples/dyn/) against glibc, or check them.

Called by build.py (``python samples/build.py`` builds both kinds; ``--check`` checks
both; ``--only dyn/NAME`` picks one of these).  Each program of samples/dyn/ becomes
samples/dyn/bin/ARCH/NAME (non-PIE, ET_EXEC) and samples/dyn/bin/ARCH/NAME-pie (PIE,
ET_DYN), linked by zig cc against its glibc 2.36 stubs (Debian 12's glibc) for the
targets x86-linux-gnu.2.36 and x86_64-linux-gnu.2.36, with the interpreter Debian uses
(/lib/ld-linux.so.2, /lib64/ld-linux-x86-64.so.2).  They run on the Debian rootfs of the
e2e tests (tests/e2e/debian_rootfs.py), or on any glibc >= 2.36 system of the arch.

libtrapline_tls.so (tls_lib.c) and libtrapline_interpose.so (interpose_lib.c) are built
beside the programs; ``tls`` and ``interpose`` find theirs through DT_RUNPATH $ORIGIN.  ``cxx_throw`` is linked against the Debian rootfs's own
libstdc++.so.6 and libgcc_s.so.1 (zig's bundled libc++ would be linked statically, and
the point is an exception thrown out of libstdc++), so building it needs that rootfs,
which this script assembles with the e2e tests' code if it is not cached.  Only the
libraries' sonames and symbol versions reach the binary, so any Debian 12 point release
gives the same bytes.

Reproducibility is build.py's: the pinned zig, fresh caches, relative source names,
no build-id, objcopy --strip-debug (the symbol table stays).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
from dataclasses import dataclass
from pathlib import Path

from elftools.elf.elffile import ELFFile

import build as static_build
from build import BuildError

DYN_DIR = static_build.SAMPLES_DIR / "dyn"
DYN_BIN = DYN_DIR / "bin"
REPO_ROOT = static_build.SAMPLES_DIR.parent

TARGETS = {"i386": "x86-linux-gnu.2.36", "x86_64": "x86_64-linux-gnu.2.36"}
DEBIAN_ARCH = {"i386": "i386", "x86_64": "amd64"}
MULTIARCH = {"i386": "i386-linux-gnu", "x86_64": "x86_64-linux-gnu"}
INTERPRETER = {"i386": "/lib/ld-linux.so.2", "x86_64": "/lib64/ld-linux-x86-64.so.2"}
MACHINE = {"i386": "EM_386", "x86_64": "EM_X86_64"}

# Shared libraries built beside the programs: soname -> source.
LIBRARIES = {
    "libtrapline_tls.so": "tls_lib.c",
    "libtrapline_interpose.so": "interpose_lib.c",
}

COMMON_FLAGS = [
    "-O1",
    "-fno-omit-frame-pointer",
    # Calls stay calls into libc: no strlen of a constant folded away, no malloc/free
    # pair elided, no printf turned into puts behind the sample's back.
    "-fno-builtin",
    "-g0",
    "-Wall", "-Wextra", "-Werror",
    "-Wl,--build-id=none",
]
C_FLAGS = ["-std=c11", *COMMON_FLAGS]
PIE_FLAGS = {False: ["-fno-pie", "-no-pie"], True: ["-fPIE", "-pie"]}


@dataclass(frozen=True)
class Program:
    """One program of samples/dyn/: its source and what it links besides libc."""

    name: str
    source: str
    library: str | None = None  # a soname of LIBRARIES
    links_libstdcxx: bool = False
    links_libgcc_s: bool = False    # _Unwind_Backtrace, from the rootfs's libgcc_s.so.1


PROGRAMS = (
    Program("hello", "hello.c"),
    Program("dlopen_cos", "dlopen_cos.c"),
    Program("tls", "tls.c", library="libtrapline_tls.so"),
    Program("interpose", "interpose.c", library="libtrapline_interpose.so"),
    Program("malloc_count", "malloc_count.c"),
    Program("strlen_calls", "strlen_calls.c"),
    Program("cxx_throw", "cxx_throw.cc", links_libstdcxx=True),
    Program("relocate_frames", "relocate_frames.c", links_libgcc_s=True),
)


def program_names() -> list[str]:
    return [p.name for p in PROGRAMS]


def output_names(names: list[str]) -> list[str]:
    """The files a build of ``names`` writes per arch (with the libraries they use)."""
    files = [f for n in names for f in (n, f"{n}-pie")]
    return sorted(files + _libraries_of(names))


def _libraries_of(names: list[str]) -> list[str]:
    return sorted({p.library for p in PROGRAMS if p.name in names and p.library})


def build_all(names: list[str], out_dir: Path, work: Path) -> None:
    print(f"building {len(names)} dynamic sample(s), PIE and non-PIE, for "
          f"{', '.join(TARGETS)}", flush=True)
    for arch in TARGETS:
        build_target(arch, names, out_dir / arch, work / f"dyn-{arch}")


def build_target(arch: str, names: list[str], out_dir: Path, work: Path) -> None:
    work.mkdir(parents=True, exist_ok=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    objcopy = static_build.find_objcopy()
    for soname in _libraries_of(names):
        # -fsemantic-interposition: the library's calls to its own exported functions stay
        # calls through its PLT, as ELF's rules allow a program to interpose them.
        _compile(arch, ["-shared", "-fPIC", "-fsemantic-interposition", f"-Wl,-soname,{soname}",
                        LIBRARIES[soname]], out_dir / soname, work, objcopy, "c")
    for program in (p for p in PROGRAMS if p.name in names):
        for pie in (False, True):
            out_path = out_dir / (f"{program.name}-pie" if pie else program.name)
            inputs = [*PIE_FLAGS[pie], program.source, *_link_inputs(program, arch, out_dir)]
            kind = "c++" if program.source.endswith(".cc") else "c"
            _compile(arch, inputs, out_path, work, objcopy, kind)
            problems = check_program(out_path, arch, pie, _host_paths(work))
            if problems:
                raise BuildError(f"{arch}/{out_path.name}: " + "; ".join(problems))
            print(f"[{arch}] dyn/{out_path.name}: {out_path.stat().st_size} bytes", flush=True)


def _link_inputs(program: Program, arch: str, out_dir: Path) -> list[str]:
    inputs = []
    if program.library:
        # The library by path: DT_NEEDED gets its soname; $ORIGIN finds it at run time.
        inputs += ["-pthread", str(out_dir / program.library), "-Wl,-rpath,$ORIGIN"]
    if program.links_libstdcxx:
        libdir = debian_rootfs(arch) / "usr/lib" / MULTIARCH[arch]
        # By path, not -lstdc++: zig reads -lstdc++ as "link zig's own libc++".
        inputs += [str(libdir / "libstdc++.so.6"), str(libdir / "libgcc_s.so.1")]
    elif program.links_libgcc_s:
        inputs += [str(debian_rootfs(arch) / "usr/lib" / MULTIARCH[arch] / "libgcc_s.so.1")]
    return inputs


def _compile(arch: str, inputs: list[str], out_path: Path, work: Path, objcopy: str,
             kind: str) -> None:
    unstripped = work / f"{out_path.name}.full"
    flags = C_FLAGS if kind == "c" else ["-std=c++17", "-nostdinc++", "-nostdlib++",
                                         *COMMON_FLAGS]
    cmd = [sys.executable, "-m", "ziglang", "cc" if kind == "c" else "c++",
           "-target", TARGETS[arch], *flags,
           f"-ffile-prefix-map={static_build.SAMPLES_DIR}=.", *inputs, "-o", str(unstripped)]
    static_build._run(cmd, cwd=DYN_DIR, env=static_build.zig_env(work / "zig-cache"),
                      what=f"{arch}/dyn/{out_path.name}: zig {kind}")
    static_build._run([objcopy, "--strip-debug", str(unstripped), str(out_path)], cwd=work,
                      env=None, what=f"{arch}/dyn/{out_path.name}: objcopy")
    out_path.chmod(0o755)
    unstripped.unlink()


def check_program(path: Path, arch: str, pie: bool, host_paths: list[Path]) -> list[str]:
    """Dynamic ELF of the arch with Debian's interpreter, the wanted type, a symbol
    table with main, no DWARF, and no path of the build host in its bytes."""
    problems = []
    with open(path, "rb") as handle:
        elf = ELFFile(handle)
        if elf["e_machine"] != MACHINE[arch]:
            problems.append(f"e_machine {elf['e_machine']}, expected {MACHINE[arch]}")
        wanted_type = "ET_DYN" if pie else "ET_EXEC"
        if elf["e_type"] != wanted_type:
            problems.append(f"e_type {elf['e_type']}, expected {wanted_type}")
        interps = [s.get_interp_name() for s in elf.iter_segments(type="PT_INTERP")]
        if interps != [INTERPRETER[arch]]:
            problems.append(f"PT_INTERP {interps}, expected {INTERPRETER[arch]}")
        symtab = elf.get_section_by_name(".symtab")
        if symtab is None or not symtab.get_symbol_by_name("main"):
            problems.append("no .symtab entry for main")
        debug = [s.name for s in elf.iter_sections() if s.name.startswith(".debug")]
        if debug:
            problems.append(f"debug sections {debug}")
    data = path.read_bytes()
    problems += [f"contains the host path {p}" for p in host_paths if os.fsencode(str(p)) in data]
    return problems


def _host_paths(work: Path) -> list[Path]:
    zig_dir = Path(importlib.util.find_spec("ziglang").origin).parent
    return [static_build.SAMPLES_DIR, work, zig_dir, REPO_ROOT / "tests"]


def debian_rootfs(arch: str) -> Path:
    """The e2e tests' Debian rootfs of ``arch`` (assembled with apt if not cached)."""
    if str(REPO_ROOT) not in sys.path:
        sys.path.insert(0, str(REPO_ROOT))
    from tests.e2e.debian_rootfs import ensure_debian_rootfs

    return ensure_debian_rootfs()[DEBIAN_ARCH[arch]]


def sums_text(bin_dir: Path) -> str:
    lines = []
    for arch in sorted(TARGETS):
        for path in sorted((bin_dir / arch).glob("*")):
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            lines.append(f"{digest}  {arch}/{path.name}\n")
    return "".join(lines)


def compare_with_committed(names: list[str], fresh_dir: Path) -> list[str]:
    mismatches = []
    for arch in TARGETS:
        for name in output_names(names):
            committed, fresh = DYN_BIN / arch / name, fresh_dir / arch / name
            if not committed.exists():
                mismatches.append(f"dyn/{arch}/{name}: not committed in {DYN_BIN}")
            elif committed.read_bytes() != fresh.read_bytes():
                mismatches.append(f"dyn/{arch}/{name}: rebuild differs from the committed binary")
    sums_file = DYN_BIN / static_build.SUMS_NAME
    if not sums_file.exists() or sums_file.read_text() != sums_text(DYN_BIN):
        mismatches.append(f"dyn/{static_build.SUMS_NAME}: does not match the committed binaries")
    return mismatches
