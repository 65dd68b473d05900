"""`trapline explain --technique handler`: a user handler (US 9,336,001) called from the trampoline
page, followed through one hit.

samples/bin/ARCH/fib 10 is probed at fib's entry with the trampoline strategy and the user
handler samples/handlers/ARCH/limit_n.s (fib's n becomes at most 5). The page is listed block by
block (Save_Registers, Call_User_BreakpointHandler, Restore_Registers, OriginalInstruction_Copy,
Jump_NextInstruction, and the handler's own copy, User_BreakpointHandler), then code breakpoints
on every instruction of the page follow the first hit: the int3, the registers saved into a
struct trapline_regs, the call, the handler writing the saved n, the restore loading it back,
the relocated original and the jump back. What the handler changed is the difference between
the thread's state at the int3 and back in fib: rdi on x86-64 (psABI 3.2.3: the first argument),
the argument word at [esp+4] on i386 (psABI 2.2: on the stack), which the handler reaches
through the saved esp. The same inputs give the same output on every run.
"""
from pathlib import Path

from instrumenter.strategies.handlers.user import load_handler
from instrumenter.probes.definitions import Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session

from . import document as d
from .guest import limit_n_handler, spawn_sample
from .probe import _page_listing
from .steps import StepRecorder
from ..probespec import parse_probe_spec

N = 10


def explain_handler(arch: str = "x86_64") -> dict:
    handler = Path(limit_n_handler(arch))
    kernel, proc, stdout = spawn_sample(arch, "fib", [str(N)])
    debug = kernel.debug
    probe = Probe(parse_probe_spec("uprobe:fib:fib"), handler=load_handler(str(handler)))
    session = Session(kernel, [probe], buffers=Buffers(drain=lambda r: None), strategy="trampoline")
    session.attach(proc)
    [(serial, address)] = list(session.trampolines.sites)
    site = session.trampolines.sites[(serial, address)]
    listing, path = _page_listing(site.page, arch)
    blocks = {item["address"]: item["note"].split(":")[0] for item in listing}
    argument = _Argument(debug, proc, arch)
    recorder = StepRecorder(debug, proc, address, path, site.insn.next_address,
                            watch=argument.read, watch_name=argument.name,
                            where=lambda a: blocks.get(a) or debug.symbolize(proc, a))
    source = [line for line in handler.read_text().splitlines() if line and not line.startswith("#")]
    status = kernel.run(proc)
    recorder.close()
    session.flush()
    output = stdout.data.decode().strip()
    steps = recorder.items()
    changed = _changed(recorder, argument)
    sections = [
        d.section("1. the probe", [
            d.text(f"uprobe:fib:fib at {address:#x}, trampoline strategy, --handler "
                   f"samples/handlers/{arch}/limit_n.s:"),
            *[d.text(f"    {line.strip()}") for line in source],
            d.patch(address, site.insn.raw, b"\xcc", "the int3 (FIG. 4 block 450)")]),
        d.section(f"2. the trampoline page at {site.trampoline:#x} ([uprobes]), block by block",
                  listing),
        d.section("3. the first hit, instruction by instruction (code breakpoints: nothing "
                  f"stops; '{argument.name}' is fib's n)", steps),
        d.section("4. what the handler changed (the thread at the int3 against the thread back "
                  "in fib)", changed),
        d.section(None, [d.text(f"run: exit status {status >> 8}, output {output!r}: every call "
                                f"of fib had its n clamped to 5, {probe.hits} hits")]),
    ]
    title = (f"{arch}: samples/bin/{arch}/fib {N}, probe uprobe:fib:fib with --handler "
             f"samples/handlers/{arch}/limit_n.s (trampoline strategy)")
    return d.document("handler", arch, title, sections, exit_status=status >> 8, output=output,
                      hits=probe.hits, steps=len(steps))


class _Argument:
    """fib's n where the psABI puts it at the entry: rdi, or the word at [esp+4]."""

    def __init__(self, debug, proc, arch):
        self.debug, self.proc, self.arch = debug, proc, arch
        self.name = "rdi" if arch == "x86_64" else "[esp+4] at the int3"
        self.slot = None

    def read(self):
        if self.arch == "x86_64":
            return None                              # a register: the recorder has it
        thread = self.debug.current_thread()
        if self.slot is None:
            self.slot = self.debug.read_register(thread, "esp") + 4
        return int.from_bytes(self.debug.read_memory(self.proc, self.slot, 4), "little")


def _changed(recorder, argument) -> list[dict]:
    first, last = recorder.raw[0], recorder.raw[-1]
    items = [d.register(name, first[2][name], last[2][name], "changed by the handler, "
                        "loaded back by Restore_Registers")
             for name in first[2] if first[2][name] != last[2][name] and name not in
             ("rflags", "eflags", "rsp", "esp", "rbp", "ebp")]
    if first[3] is not None and first[3] != last[3]:
        items.append(d.register(f"memory {argument.slot:#x} ({argument.name})", first[3],
                                last[3], "fib's n on the stack, written through the saved esp"))
    moved = [name for name in ("rsp", "esp", "rbp", "ebp") if name in first[2]
             and first[2][name] != last[2][name]]
    if moved:
        items.append(d.text(f"{', '.join(moved)} moved too: that is the relocated original "
                            "instruction (push of the frame pointer), not the handler"))
    return items
