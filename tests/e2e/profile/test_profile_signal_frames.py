"""Stacks through signal frames (issue 26): a sample in a handler unwinds through the restorer
to the code the signal interrupted, shown as a [signal] frame (gdb's <signal handler called>).
musl's restorers have no CFI (hotchain: 50 of 178 `--event syscalls` samples were truncated
there); glibc's are a dynamic program's (samples/dyn's relocate_frames). Captured ticks (the
timer's C handler) take the same road as live ones."""
import pytest
from elftools.elf.elffile import ELFFile

from instrumenter.profiler.sampler import Sampler
from trapline.profile.session import run_profiled
from trapline.sandbox import Sandbox
from tests.e2e.debian_bins import ARCHES
from tests.e2e.rootfs_variants import EXTRA_DIR
from tests.e2e.profile.test_profile_events import SAMPLES, arch  # noqa: F401 (the fixture)

pytestmark = pytest.mark.e2e
FAULTS = 50


def _names(sample) -> list[str]:
    return [frame.name for frame in sample.frames]


def test_every_syscall_in_a_musl_handler_unwinds_through_the_signal_frame(arch):  # noqa: F811
    run = run_profiled(Sandbox(), [str(SAMPLES / arch / "hotchain")], interval=1, event="syscalls")
    assert b"faults=50 " in run.result.stdout
    samples = run.profile.samples
    in_handler = [s for s in samples if "[signal]" in _names(s)]
    # The handler's mprotect, one a fault: handler (or its tail call), [signal], the faulting
    # function, main, the start code; complete.
    assert len(in_handler) == FAULTS
    for sample in in_handler:
        names = _names(sample)
        after = names[names.index("[signal]") + 1:]
        assert after[:2] == ["faults", "main"] and sample.truncated is None, (names, sample.truncated)
        assert names[0] == "c.sys.mman.mprotectLinux"
    # None is truncated at the restorers any more (50 were, at the byte before __restore
    # on i386, before __restore_rt on x86-64); the others stop in musl's assembly, as before.
    restorers = _restorers(SAMPLES / arch / "hotchain")
    reasons = [s.truncated for s in samples if s.truncated]
    assert not [r for r in reasons if any(f"{a:#x}" in r for a in restorers)], reasons
    assert len(reasons) <= 8, reasons                 # was 58 (i386) / 52 (x86-64)


def _restorers(program) -> set[int]:
    """The addresses of musl's restorers and the byte before each."""
    with open(program, "rb") as handle:
        symbols = ELFFile(handle).get_section_by_name(".symtab")
        found = {s["st_value"] for name in ("__restore", "__restore_rt")
                 for s in symbols.get_symbol_by_name(name) or ()}
    assert found
    return found | {a - 1 for a in found}


def test_captured_ticks_in_a_handler_are_the_live_ones(arch):  # noqa: F811
    """--event insns: ticks in the handler, in the restorer and in the faulting function after
    it, taken in C with the rule the live walk taught, equal those unwound live."""
    runs = {}
    for native in (False, True):
        samples, batched, samplers = [], [], []

        class Recording(Sampler):
            def timer_tick_batch(self, thread, frames):
                batched.extend(frame.stack for frame in frames)
                super().timer_tick_batch(thread, frames)

        def attach(kernel, process, samples=samples, samplers=samplers, Recording=Recording, native=native):
            sampler = Recording(kernel.debug, interval=53, on_sample=samples.append, native=native)
            sampler.attach(process)
            samplers.append(sampler)

        result = Sandbox(tools=[attach]).run([str(SAMPLES / arch / "hotchain"), "1", "60"])
        assert result.exit_code == 0
        runs[native] = samples, batched
    (live, _), (captured, batched) = runs[False], runs[True]
    assert captured == live
    through = [s for s in live if "[signal]" in _names(s)]
    assert len(through) > 10 and not any(s.truncated for s in through)
    assert any(_names(s)[0] == "[signal]" for s in through)          # a tick in the restorer
    signal_pcs = {f.address for s in through for f in s.frames if f.function == "[signal]"}
    assert any(signal_pcs & set(stack) for stack in batched)         # the C handler took some


@pytest.mark.parametrize("arch", ARCHES)
def test_a_glibc_handler_unwinds_through_the_signal_frame_to_main(arch, dyn_samples_rootfs):  # noqa: F811
    """relocate_frames raises SIGUSR1 in `signalled`; on_usr1 prints (a write system call):
    on_usr1 ... [signal] then raise's frames in libc, signalled, main. The restorer is glibc's
    __restore_rt on x86-64; on i386 glibc sets no SA_RESTORER when there is a vDSO
    (sysdeps/unix/sysv/linux/i386/libc_sigaction.c SET_SA_RESTORER), so the kernel returns
    through the vDSO's __kernel_sigreturn, as perf shows it natively ([vdso])."""
    root = dyn_samples_rootfs(arch)
    run = run_profiled(Sandbox(rootfs=str(root), clear_env=True),
                       [f"/{EXTRA_DIR}/relocate_frames"], interval=1, event="syscalls")
    assert run.result.exit_code == 0 and b"on_usr1 unwinds to main: yes" in run.result.stdout
    in_handler = [s for s in run.profile.samples if "on_usr1" in _names(s)]
    assert in_handler
    for sample in in_handler:
        names = _names(sample)
        assert "[signal]" in names and sample.truncated is None, (names, sample.truncated)
        after = names[names.index("[signal]") + 1:]
        assert "signalled" in after and after[after.index("signalled") + 1] == "main", names
        restorer = sample.frames[names.index("[signal]")].module
        assert restorer == "[vdso]" if arch == "i386" else restorer.startswith("libc.so"), restorer
