"""The relocation oracle's inputs, drawn: one instruction of a class (or form) at a layout.

`draw_relocation_case(draw, cls, form, arch, placement)` draws in the order the project's
relocation property always has (layout, instance, indirect target), so the same seed gives
the same examples; `relocation_cases(arch, ...)` is the hypothesis strategy over it.
"""
from __future__ import annotations

from hypothesis import strategies as st

from instrumenter.insn.forms import Form
from instrumenter.insn.policy import InsnClass, classify, forms_of

from .instructions import class_names, classes_of, instances, plant_indirect_target
from .layouts import PLACEMENTS, layouts
from .oracles import RelocationCase


def draw_relocation_case(draw, cls: InsnClass, form: Form, arch: str,
                         placement: str) -> RelocationCase:
    layout = draw(layouts(arch, placement))
    insn = draw(instances(form, arch, layout))
    if classify(insn).cls is not cls:
        raise AssertionError(f"{insn}: the form {form.text!r} of {cls.value} classifies as "
                             f"{classify(insn)} (instrumenter/insn/forms.py)")
    plant_indirect_target(draw, insn, cls, layout)
    return RelocationCase(placement, cls.value, insn.raw, layout)


@st.composite
def relocation_cases(draw, arch: str, placement: str | None = None,
                     classes: list[str] | None = None, form: Form | None = None) -> RelocationCase:
    """Cases for `arch`: of the named classes (default: every relocatable class), one drawn
    form of the class (or exactly `form`), at a `placement` ("near", "far"; default: drawn)."""
    names = class_names()
    chosen = [names[c] for c in classes] if classes else classes_of(arch)
    cls = draw(st.sampled_from([c for c in chosen if forms_of(c, arch)]))
    if placement is None:
        placement = draw(st.sampled_from(PLACEMENTS[arch]))
    if form is None:
        form = draw(st.sampled_from(forms_of(cls, arch)))
    return draw_relocation_case(draw, cls, form, arch, placement)
