"""`trapline explain --technique trampoline`: US 9,336,001's trampoline page, as placed in a run.

samples/bin/ARCH/fib is probed at fib's entry with a native count (user instrumentation code)
and a user handler from samples/handlers/ (limit_n.s: fib's first argument becomes at most 5);
the listing shows the int3 that replaced the original instruction, what the kernel breakpoint
handler does with the saved IP (FIG. 5 block 540), and the trampoline page disassembled with
capstone, block by block under the patent's names and reference numerals (FIG. 6 blocks
610-650, the handler copied in at FIG. 4 block 440); then the program runs and shows what the
handler did. Addresses are fixed (no randomization), so the output is the same on every run.
"""
from pathlib import Path

import capstone

from instrumenter.strategies.handlers.user import load_handler
from instrumenter.probes.definitions import Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session

from .guest import limit_n_handler, spawn_fib
from .rows import row
from ..probespec import parse_probe_spec

ROOT = Path(__file__).resolve().parents[2]       # a checkout's, for the paths shown
SEED_NUMBERS = {
    "Save_Registers": "FIG. 6 block 610: save the registers and the thread's stack state",
    "Call_User_BreakpointHandler": "block 620: call the user breakpoint handler",
    "Restore_Registers": "block 630: restore, with the handler's changes",
    "OriginalInstruction_Copy": "block 640: the original instruction, relocated",
    "Jump_NextInstruction": "block 650: jump to the next original instruction",
    "User_BreakpointHandler": "FIG. 2 item 146, copied in at FIG. 4 block 440",
}


def _describe(name: str) -> str:
    if name.startswith("UserInstrumentation"):
        return "user instrumentation code: a native action, run in the guest"
    return SEED_NUMBERS.get(name, "")


def listing(page, arch: str) -> list[dict]:
    """The page disassembled, each block under its name (rows.py rows)."""
    cs = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_32 if arch == "i386" else capstone.CS_MODE_64)
    rows = []
    for block in page.blocks:
        rows.append(row("block", name=block.name, owner=block.owner or "", role=_describe(block.name)))
        code = bytes(page.code[block.start - page.address:block.end - page.address])
        for insn in cs.disasm(code, block.start):
            rows.append(row("page-insn", address=insn.address, bytes=insn.bytes.hex(),
                            asm=f"{insn.mnemonic} {insn.op_str}".rstrip()))
    return rows


def explain_trampoline(arch: str = "x86_64", handler: str | None = None, n: int = 10) -> str:
    from .document import from_lines, render_text
    lines, facts = _trampoline(arch, handler, n)
    return render_text(from_lines("trampoline", arch, lines, **facts))


def trampoline_document(arch: str = "x86_64", handler: str | None = None) -> dict:
    """The lines and rows as a document (document.py), with the run's figures as facts."""
    from .document import from_lines
    lines, facts = _trampoline(arch, handler, 10)
    return from_lines("trampoline", arch, lines, **facts)


def _trampoline(arch: str, handler: str | None, n: int) -> tuple[list, dict]:
    spec = handler or limit_n_handler(arch)
    # the default handler is shown by its place in the sources wherever it was installed
    shown = (f"samples/handlers/{arch}/limit_n.s" if handler is None
             else Path(spec).relative_to(ROOT) if spec.startswith(str(ROOT)) else spec)
    kernel, proc, stdout = spawn_fib(arch, n)
    probe = Probe(parse_probe_spec("uprobe:fib:fib"), native="count", handler=load_handler(spec))
    session = Session(kernel, [probe], buffers=Buffers(), strategy="trampoline")
    session.attach(proc)
    [(_, address)] = list(session.trampolines.sites)
    site = session.trampolines.sites[(proc.space.serial, address)]
    insn = site.insn
    pc = "EIP" if arch == "i386" else "RIP"
    out = [f"=== {arch}: samples/bin/{arch}/fib {n}, probe uprobe:fib:fib with --native count "
           f"and --handler {shown} ===",
           row("int3-patch", address=address, symbol="fib", asm=f"{insn.mnemonic} {insn.op_str}",
               before=insn.raw.hex(), after="cc"),
           row("redirect", pc=pc, saved=address + 1, to=site.trampoline),
           row("page", address=site.trampoline, size=len(site.page.code))]
    out += listing(site.page, arch)
    status = kernel.run(proc)
    session.flush()
    out += [f"run: exit status {status >> 8}, output {stdout.data.decode().strip()!r}, "
            f"{probe.hits} hits counted in the page (fib's n clamped to 5 by the handler: "
            "2·F(6) − 1 = 15 calls)" if probe.hits == 15 else
            f"run: exit status {status >> 8}, output {stdout.data.decode().strip()!r}, "
            f"{probe.hits} hits counted in the page"]
    facts = {"exit_status": status >> 8, "output": stdout.data.decode().strip(),
             "hits": probe.hits, "site": address, "trampoline": site.trampoline}
    return out, facts
