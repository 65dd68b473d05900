"""The guest the `trapline explain` techniques run: samples/bin/ARCH/fib N in a fresh kernel
whose stdout is captured (shared by explain_trampoline, explain_relocate, explain_detach)."""
import io

from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig

from ..samples import arch_dir, handlers_dir


def limit_n_handler(arch: str) -> str:
    """samples/handlers/ARCH/limit_n.s, from a checkout or an installed wheel."""
    return str(handlers_dir() / arch / "limit_n.s")


def spawn_fib(arch: str, n: int):
    """(kernel, process, captured stdout) for fib N, not started yet (as spawn_sample: the
    same stack wherever trapline lies)."""
    return spawn_sample(arch, "fib", [str(n)])


def spawn_sample(arch: str, name: str, args: list[str], *, quantum: int | None = None):
    """(kernel, process, captured stdout) for samples/bin/ARCH/NAME ARGS, not started yet; a
    small `quantum` interleaves the threads finely, each quantum ending at its very instruction
    (the loss experiment's setting: the explanations show switches inside a window).

    The program is run as ./NAME from its own folder, with no environment: execve's filename is
    copied to the top of the new stack (fs/exec.c), so an absolute path would move every stack
    address, and the instructions start-up code spends on it, with the folder trapline lies in;
    this way the same sample gives the same explanation in every clone."""
    stdout = CapturedOutput(name=b"pipe:[1]")
    extra = {} if quantum is None else {"quantum": quantum, "exact_quantum": True}
    folder = arch_dir(arch)
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=stdout, stderr=CapturedOutput(),
                                 report=io.StringIO(), cwd=str(folder).encode(), **extra))
    argv = [name.encode()] + [a.encode() for a in args]
    return kernel, kernel.spawn(f"./{name}".encode(), argv, []), stdout


def sample_sandbox(arch: str, **options):
    """A Sandbox (trapline/sandbox.py) whose guest root is samples/bin/ARCH (the samples are
    static: they need nothing else), so a sample runs as /NAME with an empty environment: no
    host path on its stack, as spawn_sample. Returns (sandbox, folder)."""
    from ..sandbox import Sandbox
    folder = arch_dir(arch)
    return Sandbox(rootfs=str(folder), clear_env=True, env={}, **options), folder
