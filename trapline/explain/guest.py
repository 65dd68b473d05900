"""The guest the `trapline explain` techniques run: samples/bin/ARCH/fib N in a fresh kernel
whose stdout is captured (shared by explain_trampoline, explain_relocate, explain_detach)."""
import io
from pathlib import Path

from kernel_model.fs import CapturedOutput
from kernel_model.kernel import Kernel, KernelConfig

ROOT = Path(__file__).resolve().parents[2]


def spawn_fib(arch: str, n: int):
    """(kernel, process, captured stdout) for fib N, not started yet."""
    stdout = CapturedOutput(name=b"pipe:[1]")
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=stdout, stderr=CapturedOutput(),
                                 report=io.StringIO()))
    program = ROOT / "samples" / "bin" / arch / "fib"
    return kernel, kernel.spawn(str(program).encode(), [b"fib", str(n).encode()], []), stdout


def spawn_sample(arch: str, name: str, args: list[str], *, quantum: int | None = None):
    """(kernel, process, captured stdout) for samples/bin/ARCH/NAME ARGS, not started yet; a
    small `quantum` interleaves the threads finely (the loss experiment's setting)."""
    stdout = CapturedOutput(name=b"pipe:[1]")
    extra = {} if quantum is None else {"quantum": quantum}
    kernel = Kernel(KernelConfig(stdin=CapturedOutput(), stdout=stdout, stderr=CapturedOutput(),
                                 report=io.StringIO(), **extra))
    program = ROOT / "samples" / "bin" / arch / name
    argv = [name.encode()] + [a.encode() for a in args]
    return kernel, kernel.spawn(str(program).encode(), argv, []), stdout
