"""`trapline run` imports only what a run needs (issue 12: a run starts at once).

How long it takes is a benchmark's business (bench/startup.py); what it imports is checked here.
"""
import subprocess
import sys
from pathlib import Path

import pytest

HELLO = Path(__file__).resolve().parents[3] / "samples" / "bin" / "x86_64" / "hello"
NOT_FOR_A_RUN = ("lief", "capstone", "keystone", "instrumenter", "rich", "trapline.strace",
                 "trapline.explain", "trapline.experiments", "elftools.elf.elffile", "elftools.dwarf")

SCRIPT = """
import sys
from trapline.cli import main
try:
    main(sys.argv[1:])
except SystemExit as e:
    status = e.code
heavy = sorted({m for m in sys.modules for p in PREFIXES if m == p or m.startswith(p + ".")})
print(status, " ".join(heavy) or "-", file=sys.stderr)
"""


def _modules_after(*args: str) -> tuple[str, list[str]]:
    code = f"PREFIXES = {NOT_FOR_A_RUN!r}\n" + SCRIPT
    done = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
    status, heavy = done.stderr.strip().splitlines()[-1].split(" ", 1)
    return status, [] if heavy == "-" else heavy.split()


# The strategy registry is plain data the CLI's --strategy choices come from (about 1.5 ms): the
# instrumenter package itself, its strategies and decoders, must not load for a run.
REGISTRY_ONLY = ["instrumenter", "instrumenter.strategies", "instrumenter.strategies.registry"]


def test_run_imports_no_instrumenter_and_no_heavy_library():
    status, heavy = _modules_after("run", "--", str(HELLO))
    assert status == "0" and heavy == REGISTRY_ONLY


@pytest.mark.parametrize("command, module", [("explain", "trapline.explain"),
                                             ("experiment", "trapline.experiments")])
def test_other_commands_are_still_found(command, module):
    status, heavy = _modules_after(command, "--help")
    assert status == "0" and module in heavy
