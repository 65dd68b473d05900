"""Whole programs under a strategy: a shipped sample run on the modeled kernel, probed through
a tracing Session with the strategy named (ours, `package.module:Class` or an entry point), and
the same sample run unprobed — the process-level properties (trees.py, threads.py,
detaching.py) compare the two.

The samples are the shipped ones (trapline/samples.py finds them in a checkout
or an installed wheel). The kernel is the real model: fork, vfork, exec, threads and the
scheduler's quanta are Linux's, and a strategy reaches them only through the debug interface.
"""
from __future__ import annotations

import functools
import io
from dataclasses import dataclass, field

from instrumenter.errors import InstrumenterError, StrategyError

MAX_INSNS = 20_000_000       # a safety net: every sample ends long before (a hang is the time limit's)


class Refused(Exception):
    """The strategy refused a site of the program: the example is counted as refused."""


class Skipped(Exception):
    """The example cannot judge what it is about (the program ended before the drawn point)."""


class Broken(Exception):
    """The strategy's own code raised while placing or running: a counterexample's cause."""


@dataclass
class GuestRun:
    exit_code: int
    stdout: bytes
    records: list = field(default_factory=list)
    probes: list = field(default_factory=list)
    session: object = None


def samples_unavailable() -> str | None:
    """Why the whole-program properties cannot run here (no shipped samples found), or None."""
    from trapline.samples import ENV, candidate_dirs, samples_dir
    if samples_dir() is not None:
        return None
    return (f"no shipped samples found (searched {', '.join(map(str, candidate_dirs()))}; "
            f"set {ENV})")


def sample(arch: str, name: str) -> bytes:
    from trapline.samples import sample_path
    return str(sample_path(name, arch)).encode()


def _kernel(quantum: int | None):
    from kernel_model.fs import CapturedOutput
    from kernel_model.kernel import DEFAULT_QUANTUM, Kernel, KernelConfig
    stdout = CapturedOutput(name=b"pipe:[1]")
    config = KernelConfig(stdin=CapturedOutput(b""), stdout=stdout,
                          stderr=CapturedOutput(name=b"pipe:[2]"), report=io.StringIO(),
                          quantum=quantum or DEFAULT_QUANTUM, max_insns=MAX_INSNS)
    return Kernel(config), stdout


@functools.lru_cache(maxsize=256)
def unprobed(arch: str, guest: str, args: tuple[str, ...], quantum: int | None) -> tuple[int, bytes]:
    """(exit code, stdout) of the sample run with no tool (the same for every strategy)."""
    from kernel_model.kernel import wait_status_exit_code
    kernel, stdout = _kernel(quantum)
    path = sample(arch, guest)
    proc = kernel.spawn(path, [path, *(a.encode() for a in args)], [])
    return wait_status_exit_code(kernel.run(proc)), stdout.data


def probed_run(arch: str, guest: str, args: tuple[str, ...], quantum: int | None, specs,
               strategy: str, *, nargs: int = 0, before_run=None) -> GuestRun:
    """The sample run with `specs` placed by `strategy` (children followed). `before_run(kernel,
    session, probes)` may schedule what happens during the run (a detach, a removal). A site
    the strategy refuses raises Refused; the strategy's own exception raises Broken."""
    from instrumenter.probes.definitions import Probe
    from instrumenter.probes.records import Buffers
    from instrumenter.tracing.session import Session
    from kernel_model.kernel import wait_status_exit_code
    from trapline.probespec import parse_probe_spec
    kernel, stdout = _kernel(quantum)
    path = sample(arch, guest)
    proc = kernel.spawn(path, [path, *(a.encode() for a in args)], [])
    records: list = []
    probes = [Probe(parse_probe_spec(text), nargs=nargs) for text in specs]
    try:
        session = Session(kernel, probes, buffers=Buffers(drain=records.extend), strategy=strategy)
        session.attach(proc)
        if before_run is not None:
            before_run(kernel, session, probes)
        status = kernel.run(proc)
        session.flush()
    except StrategyError as broken:          # the user's strategy raised: its bug (one line)
        raise Broken(str(broken)) from None
    except InstrumenterError as refused:
        raise Refused(str(refused)) from None
    except Exception as e:                   # noqa: BLE001 -- whatever the strategy's code raised
        raise Broken(f"{type(e).__name__}: {e}") from None
    return GuestRun(wait_status_exit_code(status), stdout.data, records, probes, session)


def output_difference(expected: tuple[int, bytes], got: GuestRun) -> str | None:
    """How the probed run's exit status or output differs from the unprobed one, or None."""
    code, out = expected
    if got.exit_code != code:
        return f"exit status: unprobed {code} / probed {got.exit_code}"
    if got.stdout != out:
        at = next((i for i, (a, b) in enumerate(zip(out, got.stdout)) if a != b),
                  min(len(out), len(got.stdout)))
        line = out[:at].count(b"\n") + 1
        return (f"output line {line}: unprobed {_line(out, at)!r} / probed "
                f"{_line(got.stdout, at)!r}")
    return None


def _line(data: bytes, at: int) -> str:
    start = data.rfind(b"\n", 0, at) + 1
    end = data.find(b"\n", at)
    return data[start:end if end >= 0 else len(data)].decode(errors="replace")
