"""The central relocation property (docs/ARCHITECTURE.md, Testing): for any relocatable instruction,
generated from the policy tables, at any original and any XOL placement, from any register,
flag and memory state (trapline/testing: the same generators and oracle `trapline check` runs
on anyone's relocator), running the relocated copy out of line ends in the same architectural
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

from instrumenter.insn.forms import Form
from instrumenter.insn.policy import RELOCATABLE, InsnClass, forms_of
from instrumenter.insn.relocate import relocate
from trapline.testing.cases import draw_relocation_case
from trapline.testing.oracles import check_relocation

ARCHES = ("i386", "x86_64")
CLASS_CASES = [(cls, arch, placement)
               for cls in sorted(RELOCATABLE, key=lambda c: c.value) for arch in ARCHES
               for placement in (("near",) if arch == "i386" else ("near", "far"))
               if forms_of(cls, arch)]
FORM_CASES = [(cls, form, arch, placement) for cls, arch, placement in CLASS_CASES
              for form in forms_of(cls, arch)]


def _check(data, cls: InsnClass, form: Form, arch: str, placement: str) -> None:
    case = draw_relocation_case(data.draw, cls, form, arch, placement)
    verdict = check_relocation(case, relocate)
    insn = case.insn
    if verdict.status == "skipped":
        # e.g. a branch to itself, or into its own bytes (`67 e2 fe`): a loop of up to 2^32
        # iterations (the thorough profile found this)
        event(f"skipped: {verdict.reason}")
        return
    if verdict.status == "refused":
        # The only refusal a relocatable class may get: a far RIP-relative instruction that
        # uses the stack pointer, which the scratch-register save moves.
        assert placement == "far" and insn.rip_relative and insn.uses("rsp"), verdict.reason
        event(f"{cls.value}: refused as expected ({insn.base_mnemonic} uses rsp, far)")
        return
    relocated = verdict.relocated
    event(f"{arch} {cls.value} via {relocated.method}")
    assert verdict.difference is None, (
        f"{insn} [{insn.raw.hex()}] relocated to {case.layout.xol:#x} "
        f"({relocated.method}: {relocated.code.hex()}): {verdict.difference}")


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
