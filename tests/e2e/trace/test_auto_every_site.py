"""`auto` takes every instruction boundary of a function, and the probed run is the unprobed
one (issue 15: "auto never refuses a site the machine can run").

Every boundary of each function below carries a probe at once — system calls (`syscall`,
`int 0x80`, served by the kernel as the instruction would have been), the code around them, a
whole main — in the static samples of both arches and in the dynamic samples (the program's
own main, PIE and not, and libc's `write` in the Debian rootfs). Every probe must be placed,
the output and exit status must be the unprobed run's, and the sites of the function's entry
block, which run exactly as often as the function is called, must all count the entry's hits.
"""
from collections import Counter

import pytest

from instrumenter.insn.decode import boundaries, decode
from loader.elf import load_elf_file
from tests.e2e.debian_bins import ARCHES
from tests.e2e.rootfs_variants import EXTRA_DIR, SAMPLE_ARCH
from trapline import Sandbox

from ..samples.test_samples_run import SAMPLES
from tests.quick_profile import alternates

pytestmark = pytest.mark.e2e
STATIC = [("i386", "fib", "fib", ["6"]), ("i386", "fileio", "close", []),
          ("i386", "fileio", "__init_tp", []), ("i386", "fileio", "main", []),
          ("x86_64", "fib", "fib", ["6"]), ("x86_64", "fileio", "__stdio_write", []),
          ("x86_64", "fileio", "close", []), ("x86_64", "fileio", "_Exit", []),
          ("x86_64", "fileio", "main", [])]


def _function_sites(path, name: str, arch: str) -> tuple[list[int], int]:
    """The function's instruction starts (its object's own addresses, as uprobe:OBJ:0xADDR
    takes them: before the load bias of a PIE) and where its entry block ends (the first
    instruction that can leave the straight line)."""
    image = load_elf_file(str(path))
    function = image.symbols.lookup(name)
    segment = next(s for s in image.segments if s.vaddr <= function.addr < s.vaddr + len(s.data))
    code = segment.data[function.addr - segment.vaddr:][:function.size]
    starts = boundaries(code, function.addr, arch)
    block_end = next((a for a in starts
                      if decode(code[a - function.addr:], a, arch).groups & {"jump", "call", "ret", "int"}
                      or decode(code[a - function.addr:], a, arch).base_mnemonic == "syscall"),
                     starts[-1])
    bias = image.load_bias
    return [a - bias for a in starts], block_end - bias


def _probe_every_site(argv, object_name: str, starts, block_end, **sandbox):
    specs = [f"uprobe:{object_name}:{a:#x}" for a in starts]
    choices = []
    plain = Sandbox(**sandbox).run(argv)
    probed = Sandbox(probes=specs, on_choice=lambda p, a, s: choices.append(s), **sandbox).run(argv)
    assert len(choices) == len(specs), "a probe was not placed"
    assert (probed.exit_code, probed.stdout) == (plain.exit_code, plain.stdout)
    entry_hits = {probed.hits[spec] for spec, a in zip(specs, starts) if a <= block_end}
    assert len(entry_hits) == 1 and entry_hits != {0}, probed.hits
    return Counter(choices)


@pytest.mark.parametrize("arch,program,function,args", STATIC)
@alternates("arch")
def test_auto_probes_every_boundary_of_a_static_function(arch, program, function, args):
    path = SAMPLES / arch / program
    starts, block_end = _function_sites(path, function, arch)
    chosen = _probe_every_site([str(path), *args], program, starts, block_end)
    if function in ("close", "_Exit", "__init_tp", "__stdio_write"):
        assert chosen["emulate"] >= 1, chosen        # its system call, run by the kernel


@pytest.mark.parametrize("arch", ARCHES)
@pytest.mark.parametrize("variant", ["", "-pie"])
@alternates("arch")
def test_auto_probes_every_boundary_of_a_dynamic_program_main(arch, variant, dyn_samples_rootfs):
    root = dyn_samples_rootfs(arch)
    name = f"malloc_count{variant}"
    starts, block_end = _function_sites(root / EXTRA_DIR / name, "main", SAMPLE_ARCH[arch])
    _probe_every_site([f"/{EXTRA_DIR}/{name}", "5"], name, starts, block_end,
                      rootfs=str(root), clear_env=True)


@pytest.mark.parametrize("arch", ARCHES)
def test_auto_probes_every_boundary_of_libc_write(arch, dyn_samples_rootfs):
    root = dyn_samples_rootfs(arch)
    libc = next(p for p in sorted(root.glob("lib/*/libc.so.6")) + sorted(root.glob("lib/libc.so.6")))
    starts, block_end = _function_sites(libc, "write", SAMPLE_ARCH[arch])
    chosen = _probe_every_site([f"/{EXTRA_DIR}/malloc_count", "5"], "libc.so.6", starts,
                               block_end, rootfs=str(root), clear_env=True)
    if arch == "amd64":
        assert chosen["emulate"] >= 1, chosen        # glibc's write: a `syscall` in it


@pytest.mark.parametrize("probe_strategy", ["auto", "emulate"])
def test_a_probed_system_call_that_blocks_is_seen_once_per_execution(probe_strategy):
    """fork_pipe's parent reads a pipe its child has not written yet: the `read` blocks, and
    the kernel restarts it by rewinding onto the probed `syscall` (kernel_model/syscalls/
    dispatch.py). musl's __syscall_cp_c is straight-line, so its `syscall` runs exactly as
    often as its entry: a restart (or fork, wait4, exit_group taken outside the CPU hook)
    must not count twice; the children run the same probes (fork copies them)."""
    path = SAMPLES / "x86_64" / "fork_pipe"
    starts, _ = _function_sites(path, "__syscall_cp_c", "x86_64")
    image = load_elf_file(str(path))
    function = image.symbols.lookup("__syscall_cp_c")
    segment = next(s for s in image.segments if s.vaddr <= function.addr < s.vaddr + len(s.data))
    code = segment.data[function.addr - segment.vaddr:][:function.size]
    site = next(a for a in starts
                if decode(code[a - function.addr:], a, "x86_64").base_mnemonic == "syscall")
    specs = ["uprobe:fork_pipe:__syscall_cp_c", f"uprobe:fork_pipe:{site:#x}"]
    plain = Sandbox().run([str(path)])
    probed = Sandbox(probes=specs, strategy=probe_strategy).run([str(path)])
    assert (probed.exit_code, probed.stdout) == (plain.exit_code, plain.stdout)
    entries, calls = probed.hits[specs[0]], probed.hits[specs[1]]
    assert entries == calls and calls > 10, probed.hits
