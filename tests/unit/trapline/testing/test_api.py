"""trapline.testing's public API: layouts that rebuild from their repr, the relocation oracle's
verdicts (passed, refused, failed with the first difference, atomicity), the public strategy
registry's one-line errors, and the profiles the pytest plugin registers."""
import pytest
from hypothesis import settings

from instrumenter.errors import StrategyError
from instrumenter.insn.decode import decode
from instrumenter.insn.emit import Emitter
from instrumenter.insn.policy import classify
from instrumenter.insn.relocate import Relocated, relocate
from instrumenter.strategies import registry
from trapline.testing import Layout, RelocationCase, check_relocation
from trapline.testing.subjects import subject

ARCH_SP = {"i386": "esp", "x86_64": "rsp"}


def _layout(arch: str, **regs) -> Layout:
    return Layout(arch, orig=0x40_0100, xol=0x50_0200, data=0x60_0000, stack=0x70_0000,
                  regs={ARCH_SP[arch]: 0x70_2000, **regs}, flags=0x8C1, fill_seed=7)


def _naive(insn, new_address, arch, **options):
    """Copies the bytes and jumps back: right for position-independent code only."""
    e = Emitter(new_address, arch)
    e.raw(insn.raw)
    e.jump(insn.next_address, "fallthrough")
    return Relocated(insn, classify(insn).cls, new_address, bytes(e.code), tuple(e.exits), "naive")


def test_a_layout_is_rebuilt_from_its_repr_with_the_same_contents():
    layout = _layout("x86_64", rax=0x1234)
    layout.writes.append((0x60_0010, b"\x01\x02"))
    again = eval(repr(layout))              # noqa: S307 -- the repr is the API's promise
    assert again == layout and again.fill == layout.fill and len(layout.fill) == 6 * 0x1000


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_builtin_relocator_passes_and_a_naive_call_copy_fails_on_the_return_address(arch):
    # call $+5 (the get-pc idiom): both runs end at the same trap, only the pushed word differs
    call = RelocationCase("near", "call_rel", bytes.fromhex("e800000000"), _layout(arch))
    assert check_relocation(call, relocate).status == "passed"
    verdict = check_relocation(call, _naive)
    assert verdict.status == "failed" and verdict.difference.what == "memory"
    # the return address the copy's call pushed is the copy's (0x500205, not 0x400105): its
    # first differing byte is the second of the word below the stack top
    word = 4 if arch == "i386" else 8
    assert verdict.difference.where == f"memory at {0x70_2000 - word + 1:#x}"
    assert (verdict.difference.original, verdict.difference.other) == ("0x01", "0x02")


def test_a_far_rip_relative_push_is_refused_with_the_reason():
    layout = _layout("x86_64")
    layout.xol = 0x7000_0000_0000
    code = bytes.fromhex("ff35") + (0x60_0100 - (0x40_0100 + 6)).to_bytes(4, "little")
    verdict = check_relocation(RelocationCase("far", "rip_relative", code, layout), relocate)
    assert verdict.status == "refused" and "stack pointer" in verdict.reason


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_dropped_lock_prefix_is_an_atomicity_difference(arch):
    reg = "eax" if arch == "i386" else "rax"
    lock_xadd = bytes.fromhex("f00fc100" if arch == "i386" else "f0480fc100")   # lock xadd [eax], eax
    case = RelocationCase("near", "plain", lock_xadd, _layout(arch, **{reg: 0x60_0800}))
    assert check_relocation(case, relocate).status == "passed"

    def unlocked(insn, new_address, arch, **options):
        moved = _naive(insn, new_address, arch)
        code = bytearray(moved.code)
        code[0] = 0x3E                       # ds: instead of lock, the same length
        return Relocated(insn, moved.cls, new_address, bytes(code), moved.exits, "unlocked")
    verdict = check_relocation(case, unlocked)
    assert verdict.status == "failed" and verdict.difference.what == "atomicity"
    assert str(verdict.difference) == "locked operations: in place [lock xadd] / relocated []"


def test_a_user_class_by_module_path_is_resolved_and_its_relocator_found():
    entry = registry.resolve("instrumenter.strategies.trampoline:TrampolineProbes")
    assert entry.module == "instrumenter.strategies.trampoline"
    assert subject(entry.name).relocator is relocate
    assert registry.is_user_strategy(entry.name) and not registry.is_user_strategy("jump")


@pytest.mark.parametrize("name,cause", [
    ("no_such_package.mod:Class", "strategy no_such_package.mod:Class: cannot import "
                                  "no_such_package.mod: ModuleNotFoundError"),
    ("instrumenter.strategies.base:Nothing", "has no class Nothing"),
    ("instrumenter.strategies.base:ProbeStrategy", "does not implement the strategy interface "
                                                  "(instrumenter/strategies/base.py): no place, "
                                                  "remove, check"),
    ("not-a-strategy", "no installed package registers it (entry-point group trapline.strategies)"),
])
def test_a_bad_strategy_is_one_line_naming_it_and_the_cause(name, cause):
    with pytest.raises(StrategyError) as error:
        registry.load(registry.resolve(name))
    assert cause in str(error.value) and "\n" not in str(error.value)
    assert str(error.value).startswith(f"strategy {name}: ")


def test_the_plugin_registers_the_profiles():
    from trapline.testing import plugin  # noqa: F401
    assert settings.get_profile("ci").max_examples == 30
    assert settings.get_profile("ci").derandomize
    assert settings.get_profile("thorough").max_examples == 4_000


def test_decode_of_a_case_is_the_instruction_at_the_original_address():
    case = RelocationCase("near", "jmp_rel", bytes.fromhex("eb10"), _layout("i386"))
    assert case.insn == decode(bytes.fromhex("eb10"), 0x40_0100, "i386")


def test_traces_strategy_option_takes_a_class_path_and_refuses_a_bad_one_in_one_line():
    from click.testing import CliRunner

    from trapline.cli.trace import trace
    option = next(p for p in trace.params if p.name == "strategy")
    assert option.type.convert("instrumenter.strategies.trampoline:TrampolineProbes", option, None)
    done = CliRunner().invoke(trace, ["--strategy", "nosuch.mod:X", "-p", "syscall:write", "true"])
    assert done.exit_code == 2
    assert ("Invalid value for '--strategy': strategy nosuch.mod:X: cannot import nosuch.mod: "
            "ModuleNotFoundError: No module named 'nosuch'") in done.output
