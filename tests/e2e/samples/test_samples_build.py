"""The committed sample binaries: integrity, shape, and reproducibility.

The fast tests check what every other test relies on (the files listed in
SHA256SUMS are the committed ones, each is a static ELF of its directory's
architecture with the symbols and prologues probes need; on an x86-64 Linux
host, the process-model samples print exactly samples/expected/NAME.out).  The
slow e2e test rebuilds everything with samples/build.py --check and demands
identical bytes.
"""

from __future__ import annotations

import hashlib
import importlib.util
import platform
import subprocess
import sys
from pathlib import Path

import capstone
import pytest
from elftools.elf.elffile import ELFFile

SAMPLES_DIR = Path(__file__).resolve().parents[3] / "samples"
BIN_DIR = SAMPLES_DIR / "bin"
ARCHES = ("i386", "x86_64")


def _load(module_name: str, file_name: str):
    # samples/ is not an installed package; load its modules by path.  build.py
    # imports `elfcheck` by plain name, as it does when run as a script.
    spec = importlib.util.spec_from_file_location(module_name, SAMPLES_DIR / file_name)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up here
    spec.loader.exec_module(module)
    return module


elfcheck = _load("elfcheck", "elfcheck.py")
build = _load("samples_build", "build.py")
# build.main imports build_dyn by plain name, and build_dyn imports `build`: give both their
# script names, whichever test of the session loaded samples/ first (or none did).
sys.modules.setdefault("build", build)
build_dyn = _load("build_dyn", "build_dyn.py") if "build_dyn" not in sys.modules else sys.modules["build_dyn"]
# One per source, plus the variants build.py makes of a source with other flags.
SAMPLES = build.sample_names()


def _sums() -> dict[str, str]:
    entries = {}
    for line in (BIN_DIR / "SHA256SUMS").read_text().splitlines():
        digest, rel = line.split("  ", 1)
        entries[rel] = digest
    return entries


def test_every_source_has_a_committed_binary_per_arch():
    assert SAMPLES == ["alloc", "args_env", "callchain", "callchain_nofp", "compute", "exec_chain",
                       "fib", "fileio", "fork_pipe",
                       "fork_probe", "forkbomb", "forkscript", "hello", "hotchain", "loss_procs",
                       "loss_threads", "manyfuncs", "quantum", "relocate_signals", "sha256", "shared_mem", "sigchain", "signals",
                       "sockets",
                       "spawn_tree", "sysv_ipc", "tailcall",
                       "threads", "vfork_exec_chain", "vfork_nested", "vfork_probe",
                       "vfork_status"]
    committed = sorted(f"{p.parent.name}/{p.name}" for p in BIN_DIR.glob("*/*"))
    assert committed == sorted(f"{arch}/{name}" for arch in ARCHES for name in SAMPLES)


def test_sha256sums_lists_exactly_the_committed_files():
    sums = _sums()
    assert sorted(sums) == sorted(f"{arch}/{name}" for arch in ARCHES for name in SAMPLES)
    for rel, digest in sums.items():
        assert hashlib.sha256((BIN_DIR / rel).read_bytes()).hexdigest() == digest, rel


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", SAMPLES)
def test_binary_is_static_with_symbols_and_prologues(arch, name):
    source_name, extra = build.source_and_flags(name)
    source = (SAMPLES_DIR / source_name).read_text()
    assert elfcheck.check_sample(str(BIN_DIR / arch / name), arch, name, source,
                                 frame_pointers="-fomit-frame-pointer" not in extra) == []


def test_the_variant_without_frame_pointers_has_none():
    """callchain_nofp is callchain built as Debian builds its code: the profiler's CFI unwinder
    is tested on it, so its functions must not keep the frame-pointer prologue."""
    for arch in ARCHES:
        with open(BIN_DIR / arch / "callchain_nofp", "rb") as fh:
            elf = ELFFile(fh)
            funcs = elfcheck.function_symbols(elf)
            assert all(elfcheck.check_prologue(elf, arch, funcs[name])
                       for name in ("leaf", "inner", "middle", "outer", "spiral"))


@pytest.mark.parametrize("arch,ei_class,machine", [
    ("i386", "ELFCLASS32", "EM_386"),
    ("x86_64", "ELFCLASS64", "EM_X86_64"),
])
def test_fib_and_main_symbols_have_sizes(arch, ei_class, machine):
    with open(BIN_DIR / arch / "fib", "rb") as fh:
        elf = ELFFile(fh)
        assert elf["e_ident"]["EI_CLASS"] == ei_class
        assert elf["e_machine"] == machine
        assert elf["e_type"] == "ET_EXEC"
        assert not list(elf.iter_segments(type="PT_INTERP"))
        funcs = elfcheck.function_symbols(elf)
    assert funcs["fib"].size > 0 and funcs["main"].size > 0
    assert funcs["fib"].address != funcs["main"].address


# Samples whose exact output is recorded in samples/expected/NAME.out.
EXPECTED = sorted(p.stem for p in (SAMPLES_DIR / "expected").glob("*.out"))
RUNS_NATIVELY = sys.platform == "linux" and platform.machine() == "x86_64"


def test_process_model_samples_have_expected_output():
    assert EXPECTED == ["exec_chain", "fork_pipe", "fork_probe", "relocate_signals", "signals",
                        "spawn_tree", "threads",
                        "vfork_exec_chain", "vfork_nested", "vfork_probe", "vfork_status"]


@pytest.mark.skipif(not RUNS_NATIVELY, reason="needs a Linux x86-64 host to run i386 and x86-64")
@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("name", EXPECTED)
def test_sample_output_natively_matches_expected(arch, name):
    # The recorded output is what the sandbox must reproduce; running the
    # binaries on the host keeps the record honest (and shows the programs'
    # own synchronization makes it deterministic).  The full path matters:
    # vfork_status and exec_chain exec argv[0].
    proc = subprocess.run([str(BIN_DIR / arch / name)], capture_output=True, text=True,
                          timeout=60, cwd=SAMPLES_DIR)
    assert (proc.returncode, proc.stderr) == (0, "")
    assert proc.stdout == (SAMPLES_DIR / "expected" / f"{name}.out").read_text()


def test_fib_check_rejects_a_tail_call():
    # What LLVM makes of fib without disable_tail_calls or with a tail call:
    # one real self-call and a jump back to the entry.  The checker must
    # refuse it, and accept the two-call shape.
    md = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_64)
    one_call_and_jump = bytes.fromhex(
        "55"            # 0x1000 push %rbp
        "4889e5"        # 0x1001 mov %rsp,%rbp
        "e8f7ffffff"    # 0x1004 call 0x1000
        "ebf5"          # 0x1009 jmp 0x1000
    )
    two_calls = bytes.fromhex("55" "4889e5" "e8f7ffffff" "e8f2ffffff" "5d" "c3")
    bad = list(md.disasm(one_call_and_jump, 0x1000))
    good = list(md.disasm(two_calls, 0x1000))
    assert elfcheck.fib_recursion_problems(bad, 0x1000) == [
        "fib has 1 direct calls to itself, expected 2",
        "fib jumps to its own entry 1 time(s): tail call",
    ]
    assert elfcheck.fib_recursion_problems(good, 0x1000) == []


def test_defined_functions_finds_definitions_not_declarations():
    source = (
        "extern char **environ;\n"
        "int helper(int x);\n"
        "__attribute__((noinline, disable_tail_calls))\n"
        "unsigned long fib(unsigned int n)\n{\n    return helper(n);\n}\n"
        "int main(int argc, char **argv)\n{\n    return 0;\n}\n"
    )
    assert elfcheck.defined_functions(source) == ["fib", "main"]


def test_compare_reports_one_line_per_differing_binary(tmp_path):
    fresh = tmp_path / "bin"
    for arch in ARCHES:
        (fresh / arch).mkdir(parents=True)
        for name in SAMPLES:
            (fresh / arch / name).write_bytes((BIN_DIR / arch / name).read_bytes())
    assert build.compare_with_committed(SAMPLES, fresh) == []
    tampered = bytearray((fresh / "i386" / "fib").read_bytes())
    tampered[-1] ^= 0xFF
    (fresh / "i386" / "fib").write_bytes(bytes(tampered))
    assert build.compare_with_committed(SAMPLES, fresh) == [
        "i386/fib: rebuild differs from the committed binary"]


def test_build_rejects_unknown_sample_names(capsys):
    assert build.main(["--only", "nosuch"]) == 2
    assert "unknown sample(s): nosuch" in capsys.readouterr().err


@pytest.mark.e2e
def test_rebuild_matches_committed_binaries():
    # Compiles musl for both targets from scratch: a minute or more.
    proc = subprocess.run([sys.executable, str(SAMPLES_DIR / "build.py"), "--check"],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stderr + proc.stdout
    assert f"check ok: {len(ARCHES) * len(SAMPLES)} binaries match" in proc.stdout
