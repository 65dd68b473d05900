"""trapline.testing: property-based checks of trampoline correctness, for anyone's strategy.

The generators and oracles the project's own property tests use (tests/property imports them
from here), public so that a relocator or a probe strategy written elsewhere is checked the
same way — by `trapline check`, or by a test file in the user's own repository (the pytest
plugin, plugin.py, registers the `ci` and `thorough` profiles and fixtures).

Modules:
  layouts       Layout (where the original, the copy, data and stack are; registers, flags),
                `layouts(arch, placement)`, `machine_for(layout, original, copy)`
  instructions  `instances(form, arch, layout)`, `classes_of(arch)`, `class_names()`,
                `plant_indirect_target`: instructions by the policy's classes and forms
  cases         RelocationCase drawn: `relocation_cases(arch, placement, classes, form)`
  oracles       `check_relocation(case, relocator) -> Verdict` (relocated vs original, one
                instruction: registers, defined flags, memory, exits and faults, atomicity),
                `program_difference` (probed vs unprobed)
  probes        probed straight-line programs on a stand-in kernel: `scenarios(arch)`,
                `sequence_difference(layout, insns, placing)`, `Placing`
  host          the host CPU as a second oracle: `run_on_host(layout, original, copy, start)`
                (x86-64 Linux; i386 in compatibility mode), `host_unavailable()`
  host_oracle   `check_on_host(case, relocator)`: Unicorn vs the host (ERRATA), and the copy
                vs the original on the host
  subjects      what is checked: a strategy by name or `package.module:Class` -> Subject
  guests        whole programs (shipped samples) on the modeled kernel, probed by a strategy
                through a tracing Session, and unprobed
  trees         process trees: forkscript's fork/vfork/exec scripts (forkscript.py), every
                call recorded once under its own pid
  threads       threads at small quanta: every hit of loss_threads/loss_procs counted
  detaching     removal and detach at a drawn instruction: output unchanged, nothing left
                (leftovers.py)
  process_properties  the three as battery properties (`guest_body`)
  verdicts      Counterexample, refusal reasons
  battery       the properties run outside pytest, with counts, shrinking, time limits and
                reports (`trapline check`)
  planted       the self-test: bugs planted in a copy of the built-in relocator, kill_table
  listing       disassembly for reports
  plugin        the pytest plugin (entry point `pytest11`: trapline.testing.plugin)

A relocator is `relocate(insn, new_address, arch, **options) -> Relocated` (the built-in one:
instrumenter/insn/relocate.py); a strategy class carries it as its `relocator` attribute
(instrumenter/strategies/trampoline.py), so a subclass of TrampolineProbes with its own
relocator is a whole strategy, placed, hit and removed like ours.
"""
from .cases import relocation_cases
from .layouts import Layout, layouts
from .oracles import Difference, RelocationCase, Verdict, check_relocation

__all__ = ["Difference", "Layout", "RelocationCase", "Verdict", "check_relocation", "layouts",
           "relocation_cases"]
