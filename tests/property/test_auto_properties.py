"""`auto` never refuses an instruction the machine can run (issue 15).

Every generated form of every instruction class (the policy tables' templates, both arches,
the same generator as the relocation and probe-equivalence properties), and the refused
instructions that can only be served in place or by the kernel (system calls, #UD, port I/O),
is placed on a real ring-3 space (tests/unit/instrumenter/strategies/emulate_harness.py) with
every strategy of the registry: the first in `auto`'s order whose `refusal` is None must take
the site with `place`. Which strategy runs a hit correctly is each strategy's own property
(test_probe_equivalence.py, test_emulate_properties.py, test_debug_patches.py); this one
proves that auto's fall-back reaches one of them for every site. Floors on how often each
fallback was chosen keep it from passing without exercising them.
"""
from collections import Counter
from dataclasses import replace

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from instrumenter.insn.decode import decode
from instrumenter.insn.policy import InsnClass, forms_of
from instrumenter.strategies import registry
from tests.unit.instrumenter.strategies.emulate_harness import emulating_space
from tests.unit.kernel_model.userland import USER_CODE, USER_STACK

from .relocation_harness import Layout
from .relocation_instances import instances

ARCHES = ("i386", "x86_64")
CLASSES = [c for c in InsnClass if c is not InsnClass.REFUSED]
# Refused out of line, served in place: system calls by the kernel (emulate), the rest by
# the single-step baseline (auto's last resort).
IN_PLACE = {"i386": ["cd80", "0f0b", "ec", "ee", "f4"],
            "x86_64": ["0f05", "cd80", "0f0b", "ec", "ee"]}


@st.composite
def sites(draw, arch: str) -> bytes:
    if draw(st.integers(0, 2)) == 0:
        return bytes.fromhex(draw(st.sampled_from(IN_PLACE[arch])))
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
    total = sum(chosen.values())
    # Floors: most forms go out of line; system calls and the in-place-only ones exercise
    # the fall-backs (about one example in three draws from IN_PLACE).
    assert chosen["trampoline"] >= total // 3, chosen
    # Single-stepping is the last resort; its stop-all scheme comes before the lossy baseline
    # (registry.py's auto_rank), so it is the one chosen where only stepping can serve.
    assert chosen["emulate"] >= 1 and chosen["singlestep-stopall"] >= 1, chosen
