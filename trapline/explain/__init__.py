"""`trapline explain`: US 7,350,196's figures 4A-6B, reproduced by running code.

It runs small functions under emulate probes and prints, for each emulation, the stack words
the trap handler found (the trap frame the CPU pushed, the words the instruction reads) and
the words it leaves for IRET, labeled as the patent labels them: positions relative to "ESP
after trap" (ESP before/after trap, EBP before trap marked where they fall) and contents by
the figures' reference numerals — EFLAGS (402), CS (404), EIP (406), EIP+1 (408), EBP (410).

The examples:
  kernel  fib(1) of samples/bin/ARCH/fib loaded as kernel code (CPL 0): push %ebp (FIG. 4A/4B),
          pop %ebp (FIG. 5A/5B) and ret; then a small function assembled here that builds its
          frame with `enter` ([0042]) and dismantles it with `leave` (FIG. 6A/6B).
  user    fib(1) at CPL 3: the trap switches to the kernel stack and pushes SS:ESP too, so the
          frame stays where it is and only the saved ESP changes.
Everything comes from a fixed layout and fixed inputs: the output is the same on every run.
"""

import click
from keystone import KS_ARCH_X86, KS_MODE_32, KS_MODE_64, Ks

from emu.errors import TraplineError
from instrumenter.strategies.emulate.kernel_probes import KernelEmulateProbes
from instrumenter.errors import InstrumenterError
from instrumenter.strategies.emulate.return_sites import return_sites
from instrumenter.strategies.registry import CHOICES as STRATEGY_CHOICES
from kernel_model.ring0 import BareGuest
from loader.elf import load_elf_file

from ..samples import sample_path
from .techniques import NAMES as TECHNIQUES

DEMO_ADDRESS = 0x0040_0000
DEMO_ARGUMENT = 21
# A function that builds its frame with ENTER and dismantles it with LEAVE (patent [0029]).
DEMO_SOURCE = {
    "i386": "enter 8, 0; mov eax, [ebp+8]; add eax, eax; mov [ebp-4], eax; leave; ret",
    "x86_64": "enter 16, 0; lea eax, [rdi+rdi]; mov [rbp-4], eax; leave; ret",
}
PADDING = b"\xcc" * 16          # int3 between functions, as linkers pad: `f0 cc` is #UD too
SEED_TEXT = {"push": "FIG. 4A -> 4B, [0036]-[0038]", "pop": "FIG. 5A -> 5B, [0039]-[0041]",
             "leave": "FIG. 6A -> 6B, [0043]-[0045]", "enter": "[0042], as push + mov",
             "ret": "the return: DTrace fbt's site on amd64"}


def assemble(source: str, arch: str, address: int) -> bytes:
    ks = Ks(KS_ARCH_X86, KS_MODE_32 if arch == "i386" else KS_MODE_64)
    encoding, _ = ks.asm(source, address)
    return bytes(encoding)


# ---- running the examples ---------------------------------------------------------------------
def _fib_emulations(arch: str, ring: int, form: str) -> list:
    guest = BareGuest(arch, ring=ring)
    guest.load_image(load_elf_file(str(sample_path("fib", arch))))
    fib = guest.function("fib")
    probes = KernelEmulateProbes(guest, form=form, record=True)
    probes.place_entry(fib, _fires)
    probes.place_returns(fib, _fires)                     # pop %ebp (US 7,350,196)
    symbol = guest.symbols.function_at(fib)
    for site in return_sites(probes.original_bytes(fib, symbol.size), fib, arch, "ret"):
        probes.place(site.address, _fires)                # and the ret after it
    if guest.call(fib, 1) != 1:
        raise TraplineError("fib(1) under emulate probes did not return 1")
    return probes.emulations, []


def _demo_emulations(arch: str, form: str) -> tuple[list, list[str]]:
    guest = BareGuest(arch, ring=0)
    code = assemble(DEMO_SOURCE[arch], arch, DEMO_ADDRESS)
    guest.load_code(DEMO_ADDRESS, code + PADDING)
    probes = KernelEmulateProbes(guest, form=form, record=True)
    notes = []
    try:
        probes.place_entry(DEMO_ADDRESS, _fires)
    except InstrumenterError as refused:     # the LOCK form cannot take `enter` (c8 -> f0 ..)
        notes.append(f"`enter` is not probed with the {form} form: {refused}")
    for site in return_sites(code, DEMO_ADDRESS, arch, "frame"):
        probes.place(site.address, _fires)               # leave
        if site.ret != site.address:
            probes.place(site.ret, _fires)               # and ret
    if guest.call(DEMO_ADDRESS, DEMO_ARGUMENT) != 2 * DEMO_ARGUMENT:
        raise TraplineError("the enter/leave example did not return its doubled argument")
    return probes.emulations, notes


def _fires(_address, _frame) -> None:
    """The probe's action: nothing to record here, the emulations are what is shown."""


# ---- labels -----------------------------------------------------------------------------------
def _regs(arch: str) -> tuple[str, str, str]:
    return ("ESP", "EBP", "EIP") if arch == "i386" else ("RSP", "RBP", "RIP")


def _offset_label(base_name: str, base: int, address: int) -> str:
    delta = address - base
    return base_name if delta == 0 else f"{base_name} {'+' if delta > 0 else '-'} {abs(delta)}"


def _position(e, address: int) -> str:
    sp, bp, _ = _regs(e.insn.arch)
    same_stack = e.frame_before.sp is None or abs(e.frame_before.address - e.sp_before_trap) < 256
    label = _offset_label(f"{sp} after trap", e.frame_before.address, address) if same_stack \
        else _offset_label(f"{sp} before trap", e.sp_before_trap, address)
    marks = []
    if same_stack and address == e.sp_before_trap:
        marks.append(f"{sp} before trap")
    if address == e.bp_before_trap:
        marks.append(f"{bp} before trap")
    return label + (f" = {', '.join(marks)}" if marks else "")


def _frame_names(frame, insn, after: bool) -> dict[int, str]:
    _, _, ip = _regs(insn.arch)
    flags, names = ("EFLAGS" if insn.arch == "i386" else "RFLAGS"), {}
    ip_name = f"{ip} (406)"
    if after:
        ip_name = f"{ip}+1 (408)" if frame.ip == insn.next_address else f"{ip} = return address"
    for i, (slot, _) in enumerate(frame.slots()):
        name = {"ip": ip_name, "cs": "CS (404)", "flags": f"{flags} (402)", "sp": "saved RSP",
                "ss": "saved SS", "error_code": "error code"}[slot]
        if slot == "sp" and insn.arch == "i386":
            name = "saved ESP"
        names[frame.address + i * frame.word] = name
    return names


def _content_names(e, after: bool) -> dict[int, str]:
    _, bp, _ = _regs(e.insn.arch)
    names, op = {}, e.insn.base_mnemonic
    if not after and op in ("pop", "leave"):
        names[e.sp_before_trap if op == "pop" else e.bp_before_trap] = f"{bp} (410), popped"
    if not after and op == "ret":
        names[e.sp_before_trap] = "return address"
    if after and op in ("push", "enter"):
        names[e.bp_after if op == "enter" else e.sp_before_trap - e.frame_before.word] = \
            f"{bp} (410), pushed"
    same_stack = abs(e.frame_before.address - e.sp_before_trap) < 256
    if same_stack:
        frame = e.frame_after if after else e.frame_before
        names.update(_frame_names(frame, e.insn, after))
    return names


def _sp_after(e) -> int:
    f = e.frame_after
    return f.address + f.size if f.sp is None else f.sp


def describe(e) -> list:
    """The lines for one emulation (rows.py rows and text): the trap, then one row per stack
    word."""
    from .rows import row
    sp, bp, _ = _regs(e.insn.arch)
    word, f0, f1 = e.frame_before.word, e.frame_before, e.frame_after
    op = e.insn.base_mnemonic
    lines: list = [row("trap", vector="#BP (int3)" if e.form == "int3" else "#UD (LOCK prefix)",
                       site=e.site, asm=f"{e.insn.mnemonic} {e.insn.op_str}".strip(),
                       figure=SEED_TEXT.get(op, "emulated"))]
    cpl = f0.cs & 3
    pushed = "EFLAGS, CS, EIP" if f0.sp is None else (
        "SS, ESP, EFLAGS, CS, EIP" if e.insn.arch == "i386" else "SS, RSP, RFLAGS, CS, RIP")
    where = "on the interrupted stack" if f0.sp is None or cpl == 0 else "on the kernel stack"
    lines.append(row("trap-state", cpl=cpl, pushed=pushed, stack=where, sp=sp,
                     sp_before=e.sp_before_trap, bp=bp, bp_before=e.bp_before_trap))
    if f0.sp is not None and cpl == 3:
        lines += _frame_rows(e)
    width = 2 * word
    lines.append(f"  {'position':<52}  {'address':<{width + 4}}{'before emulation':<{width + 26}}"
                 "before IRET")
    names_before, names_after = _content_names(e, False), _content_names(e, True)
    new_sp = _sp_after(e)
    for address in range(e.window, e.window + len(e.before), word):
        old, new = e.word_at(address, after=False), e.word_at(address, after=True)
        after_is = names_after.get(address, "")
        if address not in names_after and old == new:
            after_is = f"(left behind, below the new {sp})" if address < new_sp else "(unchanged)"
        lines.append(row("stack-word", position=_position(e, address), address=address, word=word,
                         before=old, before_is=names_before.get(address, ""), after=new,
                         after_is=after_is))
    lines.append(row("iret", bp=bp, bp_before=e.bp_before_trap, bp_after=e.bp_after,
                     frame=f1.address, resumes_at=f1.ip, sp=sp, sp_after=new_sp))
    return lines


def _frame_rows(e) -> list:
    """A ring-3 trap's frame on the kernel stack: slot by slot, before and after."""
    from .rows import row
    out: list = [row("kernel-frame", address=e.frame_before.address)]
    for (slot, old), (_, new) in zip(e.frame_before.slots(), e.frame_after.slots()):
        out.append(row("frame-slot", slot=slot, word=e.frame_before.word, before=old, after=new))
    out.append("  the user stack:")
    return out


def explain_text(arch: str = "i386", form: str = "int3", modes=("kernel", "user")) -> str:
    from .document import render_text
    return render_text(emulate_document(arch, form, modes))


def emulate_document(arch: str = "i386", form: str = "int3", modes=("kernel", "user")) -> dict:
    """The lines and rows as a document (document.py); facts: the instructions emulated, per
    example."""
    from .document import from_lines
    lines, facts = _emulate(arch, form, modes)
    return from_lines("emulate", arch, lines, **facts)


def _emulate(arch: str, form: str, modes) -> tuple[list, dict]:
    sections = []
    if "kernel" in modes:
        sections.append((f"fib(1) from samples/bin/{arch}/fib as kernel code (CPL 0, same-privilege "
                         "traps)", *_fib_emulations(arch, 0, form)))
        sections.append((f"`{DEMO_SOURCE[arch]}` at {DEMO_ADDRESS:#x} as kernel code, "
                         f"called with {DEMO_ARGUMENT}", *_demo_emulations(arch, form)))
    if "user" in modes:
        sections.append((f"fib(1) from samples/bin/{arch}/fib as user code (CPL 3)",
                         *_fib_emulations(arch, 3, form)))
    out = []
    for title, emulations, notes in sections:
        out.append(f"=== {arch}, {form} probes: {title} ===")
        out += [f"note: {n}" for n in notes]
        for e in emulations:
            out += describe(e) + [""]
    facts = {"form": form, "emulated": [{"example": title, "instructions": [
        f"{e.insn.mnemonic} {e.insn.op_str}".strip() for e in emulations]}
        for title, emulations, _ in sections]}
    while out and out[-1] == "":                  # the last emulation's blank line
        out.pop()
    return out, facts


MAX_INSNS = 200_000_000          # explain -p: the probe must be reached within this (probe.py)


def _explain_probe(spec, technique, program, strategy, max_insns) -> dict:
    from ..errors import UsageError
    from .probe import explain_probe
    if technique is not None:
        raise UsageError("explain: --technique and -p are two different questions: ask one")
    if spec is None:
        raise UsageError("explain: a PROGRAM needs -p SPEC (explain -p SPEC -- PROGRAM ARGS)")
    return explain_probe(spec, program, strategy=strategy, max_insns=max_insns)


TECHNIQUE_HELP = (f"One of: {', '.join(TECHNIQUES)} (trapline/explain/techniques.py says what each "
                  "shows). Default: emulate.")


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--arch", type=click.Choice(["i386", "x86_64"]), default="i386", show_default=True,
              help="The techniques' samples' arch (with -p the program's own).")
@click.option("--form", type=click.Choice(["int3", "lock"]), default="int3", show_default=True,
              help="Patch with int3 (#BP, a trap) or a LOCK prefix (#UD, a fault).")
@click.option("--mode", type=click.Choice(["kernel", "user", "both"]), default="both",
              show_default=True, help="Run the examples as kernel code (CPL 0), user code, or both.")
@click.option("--technique", default=None, metavar="NAME", help=TECHNIQUE_HELP)
@click.option("--handler", default=None, metavar="FILE.s|FILE.o:SYMBOL",
              help="With --technique trampoline: this handler instead of samples/handlers' limit_n.s.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help="json: the document the text is rendered from "
              "(trapline/explain/schema/explain.schema.json).")
@click.option("--html", "html_file", type=click.Path(dir_okay=False, writable=True), default=None,
              metavar="FILE", help="Write the explanation as one self-contained page (SVG, a "
              "step-through of the hit) to FILE instead of printing it.")
@click.option("-p", "--probe", "spec", default=None, metavar="SPEC",
              help="Explain this uprobe on PROGRAM (explain -p SPEC -- PROGRAM ARGS): the site, "
              "each strategy's answer, the bytes, the generated code, the first hit.")
@click.option("--strategy", type=click.Choice(STRATEGY_CHOICES), default="auto",
              show_default=True, help="With -p: the strategy to place the probe with.")
@click.option("--max-insns", type=click.IntRange(min=1), default=MAX_INSNS, show_default=True,
              help="With -p: the probe must be reached within this many guest instructions.")
@click.argument("program", nargs=-1, type=click.UNPROCESSED)
def explain(arch, form, mode, technique, handler, fmt, html_file, spec, strategy, max_insns, program):
    """Show how a probing technique works, from a real run: US 7,350,196's in-trap emulation
    (the trap frame and stack words before and after each emulated push %ebp, pop %ebp, enter,
    leave and ret), US 9,336,001's trampoline page, the jump patch, and the others of
    --technique; or, with -p SPEC -- PROGRAM ARGS, what trapline does with that probe."""
    from . import document, techniques
    modes = ("kernel", "user") if mode == "both" else (mode,)
    name = technique or "emulate"
    try:
        if spec is not None or program:
            doc = _explain_probe(spec, technique, list(program), strategy, max_insns)
        else:
            options = {"emulate": {"form": form, "modes": modes},
                       "trampoline": {"handler": handler}}.get(techniques.known(name).name, {})
            doc = techniques.build(name, arch, **options)
        if html_file is not None:
            from .html import render_html
            with open(html_file, "w", encoding="utf-8") as page:
                page.write(render_html(doc))
            click.echo(f"trapline: wrote {html_file}", err=True)
            return
        click.echo(document.render_json(doc) if fmt == "json" else document.render_text(doc),
                   nl=False)
    except Exception as e:              # noqa: BLE001 -- every failure gets its status (exit_status.py)
        from ..exit_status import exit_for
        exit_for(e, lambda text: click.echo(text, err=True))
