"""`trapline explain -p SPEC [--strategy S] -- PROGRAM ARGS`: what trapline did with the user's own
probe on any program, and why.

The program runs in the sandbox (trapline/sandbox.py, output captured) with one uprobe placed by
a session of its own whose `place` is watched on both sides (every uprobe placement goes through
it: the program's at attach, a library's when ld.so maps it, an IFUNC's implementation when its
resolver has returned):
  before: the instruction at the site, its opcode-policy class (instrumenter/insn/policy.py) and
    every strategy's answer in `auto`'s order (ProbeStrategy.refusal: the reason it would
    refuse the site, or none), asked while nothing is placed there;
  after: the strategy that took the site (for `auto` the first that accepted, for --strategy
    the one named), the bytes there before and after (door reads: read_memory shows the original,
    read_memory_raw what the CPU runs), the areas the site and the tool's code lie in, and the
    code generated for the site; then code breakpoints on the site and on that code follow the
    first hit instruction by instruction (steps.py).
Bad input is one line and exit 2 (exit_status.py: InstrumenterError and UsageError are usage
errors): a probe that matches no object or function, an address that is not an instruction
boundary (the session's own checks say which), a site no strategy takes, or a site never reached
before the program ended or ran `max_insns` instructions.
"""
from __future__ import annotations

import capstone

from kernel_model.debug import PROT_EXEC, PROT_READ, PROT_WRITE

from instrumenter.errors import InstrumenterError
from instrumenter.insn.decode import decode
from instrumenter.insn.policy import classify, strategies_for
from instrumenter.strategies import registry
from instrumenter.probes.definitions import UPROBE, Probe
from instrumenter.probes.records import Buffers
from instrumenter.tracing.session import Session

from . import document as d
from .steps import StepRecorder, exits_of
from ..errors import UsageError
from ..probespec import parse_probe_spec

MAX_INSNS = 200_000_000


def explain_probe(spec_text: str, argv: list[str], *, strategy: str = "auto",
                  max_insns: int = MAX_INSNS) -> dict:
    from kernel_model.kernel import InstructionBudgetExceeded
    from ..sandbox import Sandbox
    spec = parse_probe_spec(spec_text)
    if spec.kind != UPROBE:
        raise UsageError(f"explain -p {spec_text}: explains a uprobe (uprobe:BIN:FUNC[+OFF] or "
                         "uprobe:BIN:0xADDR)")
    if not argv:
        raise UsageError("explain -p: no program given (explain -p SPEC -- PROGRAM ARGS)")
    probe = Probe(spec, nargs=0)
    watch = _Watch(probe, strategy)
    sandbox = Sandbox(capture=True, max_insns=max_insns, tools=[watch.attach])
    try:
        result = sandbox.run(argv)
        status, stopped = result.exit_code, None
    except InstructionBudgetExceeded:
        result, status, stopped = None, None, max_insns
    except InstrumenterError as refused:       # a named strategy's refusal says no probe name
        if str(refused).startswith(spec_text):
            raise
        raise InstrumenterError(f"{spec_text}: --strategy {strategy} refuses the site: "
                                f"{refused}") from None
    watch.close()
    if watch.site is None or watch.placed is None:
        raise InstrumenterError(f"{spec_text}: matches no object the program mapped"
                                if not watch.matched else
                                f"{spec_text}: never placed (no strategy took it)")
    if probe.hits == 0:
        ended = (f"within {stopped} instructions (--max-insns)" if stopped is not None
                 else f"before the program ended (exit status {status})")
        raise InstrumenterError(f"{spec_text}: placed at {watch.site['address']:#x} "
                                f"({watch.placed['strategy']}) but never reached {ended}")
    return watch.document(argv, status, stopped, result)


class _Watch:
    def __init__(self, probe, strategy: str):
        self.probe, self.strategy = probe, strategy
        self.session = None
        self.debug = None
        self.process = None
        self.site: dict | None = None       # what was seen before placing
        self.placed: dict | None = None     # what was seen after
        self.recorder: StepRecorder | None = None
        self.stripped_main: str | None = None   # how main was found in a stripped program
        self.site_offset: int | None = None     # then: the probe's offset in main
        self.site_address: int | None = None    # and the site's address in the run

    # ---- the run ------------------------------------------------------------------------------
    def attach(self, kernel, process) -> None:
        """Sandbox's tool hook: a session of our own, its `place` watched on both sides (every
        uprobe placement goes through it: the program's at attach, a library's when ld.so
        maps it, an IFUNC's implementation when its resolver returns)."""
        self.debug, self.process = kernel.debug, process
        self._find_stripped_main(process)
        self.session = Session(kernel, [self.probe], buffers=Buffers(drain=lambda r: None),
                               strategy=self.strategy)
        place = self.session.place

        def watched(process, address, hook, probe):
            if probe is self.probe and self.site is None:
                self.before(process, address)
            site = place(process, address, hook, probe)
            if probe is self.probe and self.placed is None:
                self.after(process)
            return site
        self.session.place = watched
        self.session.attach(process)

    def _find_stripped_main(self, process) -> None:
        """uprobe:PROG:main[+OFF] on a program without the symbol (Debian strips /bin/ls): the
        probe goes to the function _start hands to __libc_start_main (stripped_main.py), as the
        file's own address (uprobe:PROG:0xADDR), and the explanation says how it was found."""
        import os
        from dataclasses import replace
        from .stripped_main import has_main, main_in_file, sentence
        spec = self.probe.spec
        path = self.debug.executable_path(process)
        if spec.function != "main" or not spec.matches_binary(path) or has_main(process):
            return
        found = main_in_file(self.debug, process)
        if found is not None:
            self.probe.spec = replace(spec, function=None, offset=0, address=found + spec.offset)
            self.stripped_main = sentence(os.path.basename(path.decode(errors="replace")),
                                          self.debug.arch(process).name)
            self.site_offset = spec.offset

    @property
    def matched(self) -> bool:
        return self.session is not None and any(self.probe.spec.matches_binary(path)
                                                for path in self.session.mapped_paths)

    def before(self, process, address: int) -> None:
        """The site before anything is placed there: the instruction, every strategy's answer."""
        arch = self.debug.arch(process).name
        self.site_address = address
        insn = decode(self.debug.read_memory(process, address, 16), address, arch)
        answers = [(name, self.session.strategies[name].refusal(process, address))
                   for name in self.session.auto_order]
        image = self.debug.image_at(process, address)
        function = self.probe.spec.function
        symbol = image.symbols.lookup(function) if image is not None and function else None
        ifunc = symbol is not None and symbol.kind == "ifunc"
        self.site = {"ifunc": ifunc,"address": address, "name": self._name(process, address),
                     "object": image.path if image is not None else "?", "insn": insn,
                     "arch": arch, "answers": answers,
                     "area": _area(self.debug.area_at(process, address), "the probed site")}

    def after(self, process) -> None:
        if self.site is None or self.placed is not None or not self.probe.placements:
            return
        placement = self.probe.placements[0]
        address, name = placement.address, placement.strategy
        insn = self.site["insn"]
        strategy = self.session.strategies[name]
        site = getattr(strategy, "sites", {}).get((process.space.serial, address))
        listing, path, until = _generated(self.debug, process, name, site, insn)
        size = max(insn.length, (site.end - address) if name == "jump" else 0)
        self.placed = {"strategy": name, "listing": listing,
                       "before": self.debug.read_memory(process, address, size),
                       "after": self.debug.read_memory_raw(process, address, size),
                       "tool_area": _area(self.debug.area_at(process, path[0]), "the tool's code "
                                          f"for the site, at {path[0]:#x}") if path else None}
        labels = {item["address"]: "generated" for item in listing if item["kind"] == "insn"}
        branch = insn.branch_target                    # a probed branch may leave by its target
        until = {until} | exits_of(self.debug, process, path) | ({branch} if branch else set())
        self.recorder = StepRecorder(
            self.debug, process, address, path, until,
            where=lambda a: "tool code" if a in labels else self._name(process, a))

    def _name(self, process, address: int) -> str:
        """The door's name for `address`; the site itself as main+OFF when main was found in a
        stripped program (the door knows no name there)."""
        if self.stripped_main and self.site_offset is not None and address == self.site_address:
            return f"main+{self.site_offset:#x}" if self.site_offset else "main"
        return self.debug.symbolize(process, address)

    def close(self) -> None:
        if self.recorder is not None and self.debug.is_alive(self.process):
            self.recorder.close()

    # ---- the document -------------------------------------------------------------------------
    def document(self, argv, status, stopped, result) -> dict:
        site, placed, insn = self.site, self.placed, self.site["insn"]
        asm = f"{insn.mnemonic} {insn.op_str}".strip()
        policy = classify(insn)
        can = strategies_for(insn)
        chosen = placed["strategy"]
        sections = [
            d.section("1. the site", [
                d.insn(site["address"], insn.raw, asm, f"<{site['name']}> in {site['object']}"),
                site["area"],
                *([d.text(self.stripped_main)] if self.stripped_main else []),
                *([d.text(f"{self.probe.spec.function} is an IFUNC: its resolver ran and chose "
                          "this implementation; the probe went there (instrumenter/tracing/"
                          "ifunc.py)")] if site["ifunc"] else []),
                d.text(f"opcode policy: class {policy.cls.value} ({policy.reason}); can be "
                       f"probed by {', '.join(can) or 'none of the instruction-level strategies'}")]),
            d.section(f"2. the strategies, in auto's order (cheapest per hit first): "
                      + (f"--strategy {self.strategy}" if self.strategy != "auto"
                         else "auto takes the first that accepts"), _answers(site["answers"], chosen)),
            d.section(f"3. placed by {chosen}: the bytes at the site", [
                d.patch(site["address"], placed["before"], placed["after"],
                        "original -> what the CPU runs now")]
                + ([placed["tool_area"]] if placed["tool_area"] else [])),
            d.section("4. the code generated for the site", placed["listing"] or [
                d.text(_no_code(chosen))]),
            d.section("5. the first hit, instruction by instruction (code breakpoints: nothing "
                      "stops)", [d.text(HIT_NOTES.get(chosen, ""))] + self.recorder.items()
                      + ([] if self.recorder.done else [d.text(
                          "(the hit left by another way than the next instruction: the "
                          "step-through ends there)")])),
        ]
        run = (f"run stopped at --max-insns {stopped}" if stopped is not None
               else f"run: exit status {status}, {len(result.stdout)} bytes of output")
        sections.append(d.section(None, [d.text(f"{run}; the probe was hit {self.probe.hits} "
                                                "time(s)")]))
        title = (f"{site['arch']}: {' '.join(argv)}, probe {self.probe.spec.text} "
                 f"(--strategy {self.strategy})")
        return d.document("probe", site["arch"], title, sections, strategy=chosen,
                          address=site["address"], hits=self.probe.hits,
                          exit_status=status, answers={n: r for n, r in site["answers"]})


HIT_NOTES = {
    "jump": "the site's jmp leads to the probe's part: its int3 traps (#BP) and the kernel's "
            "breakpoint handler runs the probe's action; then the relocated instructions and "
            "the jump back run as guest code",
    "trampoline": "the site's int3 traps (#BP): the kernel's breakpoint handler runs the probe's "
                  "action and sets the saved IP to the trampoline (US 9,336,001 FIG. 5 block "
                  "540); the copy and the jump back run as guest code",
    "emulate": "the site's int3 traps (#BP): the handler runs the probe's action and emulates "
               "the instruction on the trap frame; IRET resumes after it (the registers it "
               "changed are shown on the int3's step)",
    "emulate-lock": "the site's LOCK prefix faults (#UD): the handler runs the probe's action and "
                    "emulates the instruction on the trap frame",
    "singlestep": "the site's int3 traps (#BP): the action runs, the original goes back, TF is "
                  "set; the CPU runs it and raises #DB, which writes the int3 again",
    "singlestep-stopall": "as singlestep, with every other thread of the space held from the "
                          "#BP to the #DB",
    "relocate": "the site's int3 traps (#BP): the thread is sent into the function's "
                "instrumented copy; the breakpoints see the copy's instructions under the "
                "original addresses they stand for (the door's code aliases)",
}


def _answers(answers, chosen: str) -> list[dict]:
    out = []
    for name, refusal in answers:
        summary = registry.BY_NAME[name].summary
        if name == chosen:
            verdict = "CHOSEN"
        elif refusal is None:
            verdict = "would accept"
        else:
            verdict = f"refuses: {refusal}"
        out.append(d.text(f"{name:<19} {verdict}   [{summary}]"))
    return out


def _area(vma, note: str) -> dict:
    perms = "".join(c if vma.perms & bit else "-" for c, bit in
                    (("r", PROT_READ), ("w", PROT_WRITE), ("x", PROT_EXEC)))
    return d.area(vma.start, vma.end, perms, vma.name.decode(errors="replace") or "(anonymous)", note)


def _no_code(strategy: str) -> str:
    return {"emulate": "none: the kernel's breakpoint handler emulates the instruction on the "
                       "trap frame (see --technique emulate)",
            "emulate-lock": "none: the #UD handler emulates the instruction (see --technique "
                            "emulate --form lock)",
            "singlestep": "none: the original is put back and single-stepped (see --technique "
                          "singlestep)",
            "singlestep-stopall": "none: the original is put back and single-stepped with the "
                                  "other threads held (see --technique singlestep-stopall)",
            "relocate": "the whole function's instrumented copy (see --technique relocate)"
            }.get(strategy, "none")


def _generated(debug, process, name, site, insn):
    """(listing items, addresses a hit runs through, where it rejoins the program)."""
    arch = debug.arch(process).name
    if name == "trampoline" and site is not None:
        items, path = _page_listing(site.page, arch)
        return items, path, insn.next_address
    if name == "jump" and site is not None:
        from .jump import _listing, _path, _relocated
        covered, at = [], insn.address
        while at < site.end:
            one = decode(debug.read_memory(process, at, 16), at, arch)
            covered.append(one)
            at = one.next_address
        items = _listing(debug, process, site.entry, site.body, arch, "the probe's part") + \
            _relocated(debug, process, site, covered, arch)
        return items, _path(debug, process, site, arch), site.end
    return [], [], insn.next_address


def _page_listing(page, arch):
    from .trampoline import _describe
    cs = capstone.Cs(capstone.CS_ARCH_X86, capstone.CS_MODE_32 if arch == "i386" else capstone.CS_MODE_64)
    items, path = [], []
    for block in page.blocks:
        code = bytes(page.code[block.start - page.address:block.end - page.address])
        for one in cs.disasm(code, block.start):
            path.append(one.address)
            items.append(d.insn(one.address, bytes(one.bytes), f"{one.mnemonic} {one.op_str}".strip(),
                                f"{block.name}: {_describe(block.name)}".rstrip(": ")))
    return items, path
