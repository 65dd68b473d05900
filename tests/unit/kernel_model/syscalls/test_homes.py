"""homes.py says which module of impls/ registers each call, so that the registry imports a
module when one of its calls is first needed (issue 31): the table must match the
registrations exactly, and a lookup must import the module it names and no other."""
import subprocess
import sys

from kernel_model.syscalls.homes import HOMES, MODULES
from kernel_model.syscalls.registry import all_declarations

IMPLS = "kernel_model.syscalls.impls"


def test_each_registered_call_is_homed_in_the_module_that_registers_it():
    registered = {name: declared.fn.__module__ for name, declared in all_declarations().items()}
    assert registered == {name: f"{IMPLS}.{module}" for name, module in HOMES.items()}


def test_every_module_of_impls_is_in_the_table():
    from pathlib import Path
    import kernel_model.syscalls.impls as impls
    on_disk = {p.stem for p in Path(impls.__file__).parent.glob("*.py") if p.stem != "__init__"}
    helpers = on_disk - set(MODULES)          # modules that register nothing (shared helpers)
    assert set(MODULES) <= on_disk
    for helper in helpers:
        assert f"@syscall" not in (Path(impls.__file__).parent / f"{helper}.py").read_text()


def _impls_after(code: str) -> set[str]:
    """The modules of impls/ a fresh interpreter holds after running `code`."""
    script = code + "\nimport sys\nprint(' '.join(m for m in sys.modules if m.startswith('" + IMPLS + ".')))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    return set(done.stdout.split())


def test_a_lookup_imports_the_module_of_the_call_and_what_it_imports_only():
    assert _impls_after("import kernel_model.syscalls.registry") == set()
    looked_up = _impls_after("from kernel_model.syscalls.registry import declaration, signature\n"
                             "assert declaration('socket') is not None and signature('getpid') is not None\n"
                             "assert declaration('no_such_call') is None")
    homes = _impls_after(f"import {IMPLS}.sockets, {IMPLS}.process")
    assert looked_up == homes and {f"{IMPLS}.sockets", f"{IMPLS}.process"} <= homes
    assert len(homes) < len(MODULES) // 2


def test_the_table_is_what_the_generator_writes():
    """homes_generator.py rewrites the table from the registrations (run it after adding a call):
    the file holds exactly its output, so a hand edit that drifts from it shows here."""
    from .homes_generator import HOMES_PY, regenerated
    text = HOMES_PY.read_text()
    assert regenerated(text) == text
