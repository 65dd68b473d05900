"""`auto` never refuses an instruction the machine can run (issue 15).

Every generated form of every instruction class (the policy tables' templates, both arches,
the same generator as the relocation and probe-equivalence properties), and the refused
instructions that can only be served in place or by the kernel (system calls, #UD, port I/O),
is placed on a real ring-3 space (tests/unit/instrumenter/strategies/emulate_harness.py) with
every strategy of the registry: the first in `auto`'s order whose `refusal` is None must take
the site with `place`. Which strategy runs a hit correctly is each strategy's own property
(test_probe_equivalence.py, test_emulate_properties.py, kernel_model/debug/test_patches.py); this one
proves that auto's fall-back reaches one of them for every site. The in-place-only
instructions are few: each is tried on both arches, and must go to its fall-back. (They were
drawn one time in three, with a floor of one example on each fall-back: a system call came
one example in ten, and the floor held only because hypothesis tries the simplest example,
the first in-place site, first — its way of generating, not a promise.) A floor on the
out-of-line strategy keeps the generated forms from passing without exercising it.
"""
from collections import Counter
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from instrumenter.insn.decode import decode
from instrumenter.insn.policy import InsnClass, forms_of
from instrumenter.strategies import registry
from tests.unit.instrumenter.strategies.emulate_harness import emulating_space
from tests.unit.kernel_model.userland import USER_CODE, USER_STACK
from trapline.testing.instructions import instances
from trapline.testing.layouts import Layout

ARCHES = ("i386", "x86_64")
CLASSES = [c for c in InsnClass if c is not InsnClass.REFUSED]
# Refused out of line, served in place: system calls by the kernel (emulate), the rest by
# single-stepping, auto's last resort; its stop-all scheme comes before the lossy baseline
# (registry.py's auto_rank), so it is the one chosen where only stepping can serve.
IN_PLACE = {"i386": {"cd80": "emulate", "0f0b": "singlestep-stopall", "ec": "singlestep-stopall",
                     "ee": "singlestep-stopall", "f4": "singlestep-stopall"},
            "x86_64": {"0f05": "emulate", "cd80": "emulate", "0f0b": "singlestep-stopall",
                       "ec": "singlestep-stopall", "ee": "singlestep-stopall"}}


@st.composite
def sites(draw, arch: str) -> bytes:
    cls = draw(st.sampled_from([c for c in CLASSES if forms_of(c, arch)]))
    form = draw(st.sampled_from(forms_of(cls, arch)))
    layout = Layout(arch, orig=USER_CODE, xol=USER_CODE + 0x1000_0000, data=USER_STACK,
                    stack=USER_STACK + 0x10000, regs={}, flags=0)
    return draw(instances(form, arch, replace(layout))).raw


def _auto_choice(arch: str, code: bytes) -> tuple[str, object]:
    _, process, session = emulating_space(arch, code + b"\x90" * 16)
    built = registry.build(session)
    reasons = {}
    for name in registry.AUTO_ORDER:
        reason = built[name].refusal(process, USER_CODE)
        if reason is None:
            built[name].place(process, USER_CODE, lambda thread, address: None, "p")
            return name, session.debug.patch_at(process, USER_CODE)
        reasons[name] = reason
    raise AssertionError(f"auto refuses {decode(code, USER_CODE, arch)}: {reasons}")


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(arch=st.sampled_from(ARCHES), data=st.data())
def _auto_takes_the_site(chosen: Counter, arch, data):
    code = data.draw(sites(arch), label="instruction")
    name, patched = _auto_choice(arch, code)
    assert patched is not None and patched.original == code[:len(patched.patch)]
    chosen[name] += 1


def test_auto_takes_every_generated_instruction():
    chosen = Counter()
    _auto_takes_the_site(chosen)
    # Most forms go out of line (all 30 in each random draw measured).
    assert chosen["trampoline"] >= sum(chosen.values()) // 3, chosen


@pytest.mark.parametrize("arch,code,fallback", [(arch, code, fallback)
                                                for arch, sites in IN_PLACE.items()
                                                for code, fallback in sites.items()])
def test_auto_takes_every_in_place_only_instruction_with_its_fall_back(arch, code, fallback):
    name, patched = _auto_choice(arch, bytes.fromhex(code))
    assert patched is not None and patched.original == bytes.fromhex(code)[:len(patched.patch)]
    assert name == fallback
