"""emu.internals: every private field of Unicorn is located and confirmed on the pinned build,
a wrong layout is never confirmed, and with no field located at all (every use on its
fallback, as with a Unicorn whose layout moved) the Machine behaves the same: the same
instruction counts, the same exact fault addresses, the same int-n-or-exception answers; the
one correction without a public path (old_exception) refuses instead of misdelivering.

The Machine's own behaviour tests of emu/ are imported below and run again here under the
fallback layout (pytest collects them in this module too, with its autouse fixture)."""
import dataclasses

import pytest

from emu import exits, internals
from emu.cpu_state import ApiStateViews
from emu.errors import UnicornInternalsError
from emu.icount import InstructionClock
from emu.internals import cpu_env, uc_context, uc_struct
from emu.machine import Machine
from emu.tlb import FaultHooks

from ..guest import CODE, machine_with
# Re-run under the fallback layout (the autouse fixture below):
from ..test_icount import (test_budgeted_slices_add_up_to_the_same_count,  # noqa: F401
                          test_code_translated_before_counting_is_counted_after,
                          test_machines_sharing_a_clock_continue_one_count,
                          test_the_count_inside_a_hook_is_exact_and_includes_the_int3)
from ..test_machine import (test_code_made_non_executable_after_it_ran_faults_on_fetch,  # noqa: F401
                           test_divide_error_reports_the_div_instruction,
                           test_fault_after_a_handled_int_n_is_not_reported_as_software,
                           test_fetch_from_non_executable_page_is_a_protection_fault,
                           test_fetch_from_unmapped_memory_is_a_fault_exit,
                           test_guard_page_made_prot_none_after_use_faults_on_read,
                           test_read_of_no_access_page_is_a_protection_fault,
                           test_software_interrupt_flag_tells_int_n_from_cpu_exceptions,
                           test_ud2_reaches_trap_handler_as_vector_6_at_the_instruction,
                           test_unmapped_data_access_is_a_fault_exit,
                           test_write_to_read_only_page_is_a_protection_fault)
from ..test_tlb import (test_a_fault_leaves_the_next_run_clean,  # noqa: F401
                       test_a_fetch_from_a_data_page_faults,
                       test_a_page_without_read_permission_faults_on_every_read,
                       test_a_store_into_a_read_only_page_faults,
                       test_an_unmapped_access_faults_with_its_exact_address,
                       test_code_and_data_pages_keep_working_after_a_protection_change)

LOCATED = internals.located()


@pytest.fixture(autouse=True)
def every_field_on_its_fallback(request, monkeypatch):
    if "located_layout" not in request.fixturenames:
        monkeypatch.setattr(internals, "located", lambda: internals.NOTHING)


@pytest.fixture
def located_layout():
    """Marks a test that runs on the located layout, not on the fallbacks."""
    return LOCATED


def test_every_field_is_located_on_the_pinned_unicorn(located_layout):
    """A Unicorn upgrade that moves a field shows up here (and the Machine slows down on its
    fallback), not as wrong results."""
    assert located_layout.missing() == []
    assert isinstance(Machine("x86_64")._walker, FaultHooks) is False


def test_a_wrong_layout_is_never_confirmed(located_layout):
    """Each field off by one slot, or pointing far away: the confirmations, which run a fresh
    experiment with other values, refuse every one (reading only through /proc/self/mem)."""
    env = located_layout.cpu_env
    for shift in (8, 1 << 40):
        wrong = internals.Layout(
            cpu_env=dataclasses.replace(env, env_distance=env.env_distance + shift),
            emu_counter=located_layout.emu_counter + shift,
            invalid_addr=located_layout.invalid_addr + shift,
            old_exception={b: o + shift for b, o in located_layout.old_exception.items()},
            exception_is_int={b: o + shift for b, o in located_layout.exception_is_int.items()})
        assert internals.confirmed(wrong) == internals.NOTHING
    assert internals.confirmed(located_layout) == located_layout


def test_the_locators_find_what_the_located_layout_holds(located_layout):
    assert cpu_env.locate() == located_layout.cpu_env
    assert uc_struct.locate() == (located_layout.emu_counter, located_layout.invalid_addr)
    for bits in (32, 64):
        assert uc_context.locate(bits) == (located_layout.old_exception[bits],
                                           located_layout.exception_is_int[bits])


def test_on_the_fallbacks_the_machine_uses_the_public_api(arch):
    m = Machine(arch)
    assert isinstance(m.cpu_state, ApiStateViews) and isinstance(m._walker, FaultHooks)
    assert m.software_interrupt is False and internals.located().missing() != []


LOOP = "mov ecx, 300; again: dec ecx; jnz again; ud2; nop; int3"


def _counts(arch):
    """(instructions counted in the #UD hook, when the int3 ends the run) of LOOP."""
    m = machine_with(arch, LOOP)
    m.count_instructions(InstructionClock())
    seen = []

    def handler(vector, pc):
        seen.append(m.instructions_retired)
        if vector == 6:
            m.pc = pc + 2
            return True
        return False
    m.trap_handler = handler
    m.run(CODE)
    return seen, m.instructions_retired


def test_the_fallback_counts_what_unicorns_counter_counts(arch, monkeypatch):
    """The same program, once with each counter: the same counts inside hooks (the ud2 that
    Unicorn alone saw included) and at the end."""
    fallback = _counts(arch)
    monkeypatch.setattr(internals, "located", lambda: LOCATED)
    assert _counts(arch) == fallback
    assert fallback[1] == 1 + 2 * 300 + 1 + 1 + 1


def test_a_chained_fault_is_refused_where_old_exception_is_not_located(arch):
    """Without the reset, Unicorn turns the second handled #DE into #DF: the Machine says that
    its own correction is missing (a bug report), never a double fault to the guest."""
    m = machine_with(arch, "xor ecx, ecx; mov eax, 1; div ecx; nop")
    seen = []

    def retry(vector, pc):
        seen.append(vector)
        m.pc = CODE
        return True
    m.trap_handler = retry
    with pytest.raises(UnicornInternalsError, match="old_exception"):
        m.run(CODE)
    assert seen == [0]


def test_with_old_exception_located_the_other_fallbacks_keep_divide_errors(arch, monkeypatch):
    layout = dataclasses.replace(internals.NOTHING, old_exception=LOCATED.old_exception)
    monkeypatch.setattr(internals, "located", lambda: layout)
    m = machine_with(arch, "xor ecx, ecx; mov eax, 1; div ecx; nop")
    seen = []

    def retry(vector, pc):
        seen.append((vector, m.software_interrupt))
        m.pc = CODE
        return len(seen) < 5
    m.trap_handler = retry
    assert m.run(CODE).kind == exits.TRAP and seen == [(0, False)] * 5


def test_only_emu_internals_touches_the_bindings_private_parts():
    """uc._uch, uc._hook_exception, the finalizer, uc._mode and unicorn.unicorn_py3 are used
    through emu/internals/binding.py only (a scan of every package's source)."""
    import pathlib
    import re
    root = pathlib.Path(__file__).resolve().parents[4]
    private = re.compile(r"\._uch\b|\._hook_exception\b|_Uc__finalizer|\buc\._mode\b|unicorn_py3")
    found = [f"{path.relative_to(root)}:{number}"
             for package in ("emu", "loader", "kernel_model", "instrumenter", "trapline")
             for path in sorted((root / package).rglob("*.py"))
             if "internals" not in path.relative_to(root).parts
             for number, line in enumerate(path.read_text().splitlines(), 1)
             if private.search(line)]
    assert found == []
