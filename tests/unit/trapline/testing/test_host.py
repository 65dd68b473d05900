"""The host CPU as a second oracle (trapline/testing/host.py, host_oracle.py): the same pages,
registers and flags run on the real processor, i386 in its 32-bit compatibility mode; a
disagreement with Unicorn fails unless the table knows it, and a relocation is judged by
the host's own runs."""
import pytest

from instrumenter.insn.relocate import relocate
from trapline.testing import oracles
from trapline.testing.host import host_unavailable, run_on_host
from trapline.testing.host_oracle import check_on_host
from trapline.testing.layouts import Layout, machine_for
from trapline.testing.oracles import RelocationCase, first_difference, run_outcome

from .test_api import _layout, _naive

pytestmark = pytest.mark.skipif(host_unavailable() is not None, reason=str(host_unavailable()))
ADD = {"i386": bytes.fromhex("01d8"), "x86_64": bytes.fromhex("4801d8")}      # add eax/rax, ebx/rbx


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_the_host_runs_the_layout_as_unicorn_does(arch):
    a, b = ("eax", "ebx") if arch == "i386" else ("rax", "rbx")
    layout = _layout(arch, **{a: 0xFFFF_FFFF, b: 1})
    host = run_on_host(layout, ADD[arch], b"", layout.orig)
    emulated = run_outcome(machine_for(layout, ADD[arch], b""), layout.orig, layout.regions)
    assert host.exit.kind == "trap" and host.exit.pc == layout.orig + len(ADD[arch]) + 1
    # i386 wraps at 32 bits (compatibility mode): carry out, zero result
    assert host.regs[a] == (0 if arch == "i386" else 0x1_0000_0000)
    assert host.flags & 0x41 == (0x41 if arch == "i386" else 0)
    assert first_difference(emulated, host, undefined_flags=0, stack=layout.stack,
                            dead_below=0) is None
    assert host.memory == emulated.memory


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_naive_call_copy_fails_on_the_host_too(arch):
    call = RelocationCase("near", "call_rel", bytes.fromhex("e800000000"), _layout(arch))
    assert check_on_host(call, relocate).status == "passed"
    verdict = check_on_host(call, _naive)
    assert verdict.status == "failed" and verdict.difference.what == "memory"
    assert "on the host CPU" in str(verdict.difference)


# The host oracle's first find (trapline check, x86-64, far rip_relative): IMUL's SF, which the
# SDM leaves undefined and capstone gives as defined; Unicorn sets it from the result, the
# processor did not.
IMUL = RelocationCase("far", "rip_relative", bytes.fromhex("486b05b8e0ffffff"), Layout(
    "x86_64", orig=0x12040, xol=0x80113000, data=0x10000, stack=0x13000,
    regs={"rax": 0, "rbx": 0, "rcx": 0, "rdx": 0, "rsi": 0, "rdi": 0, "rbp": 0, "r8": 0, "r9": 0,
          "r10": 0, "r11": 0, "r12": 0, "r13": 0, "r14": 0, "r15": 0, "rsp": 0x15000},
    flags=0, fill_seed=0))


def test_an_unknown_disagreement_with_the_host_fails_and_names_the_flag(monkeypatch):
    monkeypatch.setattr(oracles, "SDM_UNDEFINED", {})
    verdict = check_on_host(IMUL, relocate)
    assert verdict.status == "failed" and verdict.difference.what == "erratum"
    assert str(verdict.difference).startswith("emulator erratum? flags (SF): Unicorn ")


def test_the_sdm_table_masks_imuls_undefined_sign_flag():
    assert check_on_host(IMUL, relocate).status == "passed"


@pytest.mark.parametrize("arch", ["i386", "x86_64"])
def test_a_loop_on_the_host_ends_at_its_cpu_limit_as_a_budget_exit(arch):
    layout = _layout(arch)
    host = run_on_host(layout, bytes.fromhex("ebfe"), b"", layout.orig)        # jmp $
    assert (host.exit.kind, host.exit.pc) == ("budget", layout.orig)
