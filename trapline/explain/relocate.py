"""`trapline explain --technique relocate`: US 6,957,421's function relocation (US 6,957,421) and
original-space return pointers (US 6,898,785), as done in a run.

samples/bin/ARCH/fib is probed at fib's entry and at fib+1 with the relocate strategy. At the
probe's 3rd hit the run is three frames deep in fib's copy; the listing shows then the original
function beside its instrumented copy (each original instruction, the piece of the copy that
runs it: call-out int3s, the relocated instruction, retargeted branches), the relocation table
both ways, and the stack: every return address the recursion pushed is an ORIGINAL address
(the copy's calls push them), each with its breakpoint at that original address and the
thread's record that maps it back into the copy. Addresses are fixed (no randomization), so the
output is the same on every run.
"""

from instrumenter.insn.decode import decode
from instrumenter.probes.definitions import Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session

from .guest import spawn_fib
from .rows import row
from ..probespec import parse_probe_spec

SHOW_AT_HIT = 3


def explain_relocate(arch: str = "x86_64", n: int = 5) -> str:
    from .document import from_lines, render_text
    lines, facts = _relocate(arch, n)
    return render_text(from_lines("relocate", arch, lines, **facts))


def relocate_document(arch: str = "x86_64") -> dict:
    """The lines and rows as a document (document.py), with the run's figures as facts."""
    from .document import from_lines
    lines, facts = _relocate(arch, 5)
    return from_lines("relocate", arch, lines, **facts)


def _relocate(arch: str, n: int) -> tuple[list, dict]:
    kernel, proc, stdout = spawn_fib(arch, n)
    shown: list = []

    def action(context):
        if entry.hits == SHOW_AT_HIT:
            shown.extend(_snapshot(kernel, session, context.thread))
    entry = Probe(parse_probe_spec("uprobe:fib:fib"), nargs=1, action=action)
    inside = Probe(parse_probe_spec("uprobe:fib:fib+1"))
    session = Session(kernel, [entry, inside], buffers=Buffers(drain=lambda r: None),
                      strategy="relocate")
    session.attach(proc)
    status = kernel.run(proc)
    head = (f"=== {arch}: samples/bin/{arch}/fib {n}, probes uprobe:fib:fib and uprobe:fib:fib+1 "
            f"(relocate strategy), shown at the entry probe's {SHOW_AT_HIT}rd hit ===")
    tail = (f"run: exit status {status >> 8}, output {stdout.data.decode().strip()!r}; hits "
            f"{entry.hits} and {inside.hits} (fib is called {entry.hits} times)")
    facts = {"exit_status": status >> 8, "output": stdout.data.decode().strip(),
             "hits": {entry.spec.text: entry.hits, inside.spec.text: inside.hits}}
    return [head, *shown, tail], facts


def _snapshot(kernel, session, thread) -> list:
    debug = kernel.debug
    process = thread.process
    strategy = session.strategies["relocate"]
    arch = debug.arch(process).name
    fc = next(f.code for f in strategy.functions.values() if f.code.name == "fib")
    copy = strategy.relocations[process.space.serial].current[fc.start]
    code = debug.read_memory(process, copy.address, len(copy.code))
    out: list = [row("relocated", function="fib", start=fc.start, end=fc.end,
                     copy_start=copy.address, copy_end=copy.end,
                     breakpoints=[fc.start] + [c.next_address for c in fc.calls]),
                 "   original                                   | copy"]
    for insn in fc.insns:
        piece = copy.by_original[insn.address]
        pieces = _disassemble(code, copy.address, piece.start, piece.end, arch, copy)
        for k, copied in enumerate(pieces):
            first = k == 0
            out.append(row("copy-insn", original=insn.address if first else None,
                           original_asm=f"{insn.mnemonic} {insn.op_str}" if first else None,
                           **copied))
    out.append("   continuations (a return not made from the copy goes on in original code):")
    for original, stub in sorted(copy.stubs.items()):
        for copied in _disassemble(code, copy.address, stub.start, stub.end, arch, copy):
            out.append(row("continuation", original=original, **copied))
    out.append("2. the relocation table, both ways (relocate/table.py):")
    for insn in fc.insns[:4]:
        at = strategy.relocated_of(process, insn.address)
        back, exact = strategy.original_of(process, at)
        out.append(row("table", original=insn.address, relocated=at, back=back, exact=exact))
    pc = debug.read_register(thread, "rip" if arch == "x86_64" else "eip")
    original, exact = strategy.original_of(process, pc)
    out.append(row("pc-in-copy", pc=pc, original=original, exact=exact))
    out.append("3. original-space return pointers (relocate/returns.py): the stack holds")
    records = strategy.returns.records.get((process.space.serial, thread.tid), [])
    word = 8 if arch == "x86_64" else 4
    for sp, original in reversed(records):
        slot = sp - word
        value = int.from_bytes(debug.read_memory(process, slot, word), "little")
        out.append(row("return-pointer", slot=slot, value=value,
                       symbol=debug.symbolize(process, value),
                       copy_return=copy.return_point(original)))
    return out


def _disassemble(code: bytes, base: int, start: int, end: int, arch: str, copy) -> list[dict]:
    """The copy's instructions in [start, end) as a copy row's fields (address, asm, note)."""
    out, at = [], start
    while at < end:
        insn = decode(code[at - base:], at, arch)
        note = {"probe": "call-out: the probes' Python actions",
                "call": "the call is recorded for its return point"}.get(
                    copy.callouts.get(at, ("", 0))[0], "")
        target = insn.branch_target
        if target is not None and copy.address <= target < copy.end and not note:
            note = "retargeted into the copy"
        elif target is not None and not note:
            note = "to original code"
        out.append({"address": at, "asm": f"{insn.mnemonic} {insn.op_str}".rstrip(), "note": note})
        at += insn.length
    return out or [{"address": None, "asm": "", "note": ""}]
