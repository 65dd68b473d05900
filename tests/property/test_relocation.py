"""The central relocation property (docs/ARCHITECTURE.md, Testing): for any relocatable instruction,
generated from the policy tables, at any original and any XOL placement, from any register,
flag and memory state, running the relocated copy out of line ends in the same architectural
state as running the original in place — same exit (trap or fault) at the same ORIGINAL
address, same registers, same defined flags, same memory.

Two tests: one per (class, arch, placement) drawing forms at random with the profile's example
count, and one per form with a sixth of it, so every form of the tables runs on every CI run.
Run `pytest tests/property/test_relocation.py --hypothesis-show-statistics` to see per-class
event counts; `--hypothesis-profile=thorough` for long hunts.
"""
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st

from instrumenter.insn.emit import RED_ZONE
from instrumenter.errors import RelocationRefused
from instrumenter.insn.forms import Form
from instrumenter.insn.policy import RELOCATABLE, InsnClass, classify, forms_of
from instrumenter.insn.relocate import relocate

from .relocation_harness import build, first_difference, run
from .relocation_instances import SP, instances, layouts, plant_indirect_target

ARCHES = ("i386", "x86_64")
CLASS_CASES = [(cls, arch, placement)
               for cls in sorted(RELOCATABLE, key=lambda c: c.value) for arch in ARCHES
               for placement in (("near",) if arch == "i386" else ("near", "far"))
               if forms_of(cls, arch)]
FORM_CASES = [(cls, form, arch, placement) for cls, arch, placement in CLASS_CASES
              for form in forms_of(cls, arch)]


def _check(data, cls: InsnClass, form: Form, arch: str, placement: str) -> None:
    layout = data.draw(layouts(arch, placement), label="layout")
    insn = data.draw(instances(form, arch, layout), label="insn")
    assert classify(insn).cls is cls, f"{insn}: the form of {cls} classifies as {classify(insn)}"
    if insn.branch_target is not None and 0 <= insn.branch_target - insn.address < len(insn.raw):
        # To itself, or into its own bytes (`67 e2 fe`: addr16 loop into `e2 fe`, a loop to
        # itself): either way a loop of up to 2^32 iterations, which both runs cut at the
        # instruction budget, one jump apart (the thorough profile found this).
        event("skipped: branch into the instruction itself (would loop for rcx iterations)")
        return
    plant_indirect_target(data.draw, insn, cls, layout)
    try:
        relocated = relocate(insn, layout.xol, arch)
    except RelocationRefused as refusal:
        # The only refusal a relocatable class may get: a far RIP-relative instruction that
        # uses the stack pointer, which the scratch-register save moves.
        assert placement == "far" and insn.rip_relative and insn.uses("rsp"), str(refusal)
        event(f"{cls.value}: refused as expected ({insn.base_mnemonic} uses rsp, far)")
        return
    event(f"{arch} {cls.value} via {relocated.method}")
    original = run(build(layout, insn.raw, relocated.code), layout.orig, layout)
    moved = run(build(layout, insn.raw, relocated.code), layout.xol, layout)
    final_sp = original.regs[SP[arch]]
    dead_below = layout.stack
    if cls is InsnClass.CALL_INDIRECT:
        dead_below = final_sp                 # nothing below a callee's entry sp is live
    elif relocated.scratch is not None:
        dead_below = final_sp - RED_ZONE      # the scratch save sits below the red zone
    diff = first_difference(original, moved, undefined_flags=insn.flags_undefined,
                            stack=layout.stack, dead_below=dead_below)
    assert diff is None, (f"{insn} [{insn.raw.hex()}] relocated to {layout.xol:#x} "
                          f"({relocated.method}: {relocated.code.hex()}): {diff}")


@pytest.mark.parametrize("cls,arch,placement", CLASS_CASES,
                         ids=[f"{c.value}-{a}-{p}" for c, a, p in CLASS_CASES])
@given(data=st.data())
def test_relocated_class_behaves_like_the_original(data, cls, arch, placement):
    form = data.draw(st.sampled_from(forms_of(cls, arch)), label="form")
    _check(data, cls, form, arch, placement)


@pytest.mark.parametrize("cls,form,arch,placement", FORM_CASES,
                         ids=[f"{a}-{p}-{f.text}" for c, f, a, p in FORM_CASES])
@settings(max_examples=max(3, settings.default.max_examples // 6))
@given(data=st.data())
def test_every_form_behaves_like_the_original(data, cls, form, arch, placement):
    _check(data, cls, form, arch, placement)
