"""A Machine's translated code takes small host pages (emu/host_hugepages.py, issue 26): each
Machine cost a 2 MiB transparent huge page for its first translated block, 0.8 GiB for the 256
address spaces of a fork bomb. Run in a fresh interpreter, the flag cleared first: it is the
host process's, and children inherit it."""
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

PROBE = """
import ctypes
from emu.machine import Machine
libc = ctypes.CDLL(None, use_errno=True)
PR_SET_THP_DISABLE, PR_GET_THP_DISABLE = 41, 42
libc.prctl(PR_SET_THP_DISABLE, 0, 0, 0, 0)   # inherited from the test process: start allowed
before = libc.prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0)
def resident_kib():
    return int(open('/proc/self/statm').read().split()[1]) * 4
machines = [Machine('x86_64')]            # the first one, and the libraries it loads
start = resident_kib()
for _ in range(16):
    machine = Machine('x86_64')
    machine.mem.map(0x1000, 0x1000, 7)
    machine.mem.write(0x1000, b'\\x90' * 4 + b'\\xf4')
    machine.run(0x1000, count=4)           # one translated block
    machines.append(machine)
print(before, libc.prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0), (resident_kib() - start) // 16)
"""


def test_machines_turn_transparent_huge_pages_off_for_the_host_process():
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True,
                         check=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    before, after, per_machine_kib = map(int, out.stdout.split())
    assert (before, after) == (0, 1)
    assert per_machine_kib < 2048            # no 2 MiB page under each code buffer
