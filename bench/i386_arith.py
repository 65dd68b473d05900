"""busybox `factor` on i386 vs x86-64 side by side: 64-bit arithmetic and the cost of a store.

`factor 4611686018427387903` (= 3 * 715827883 * 2147483647) runs ~1.5e8 trial divisions. On
x86-64 each is one `div` in registers; on i386 each is a call to libgcc's __udivmoddi4 with
its arguments and saved registers on the stack, so the i386 run is store-heavy. Before the
page walker (emu/tlb.py) every guest store took Unicorn's slow store path: i386 76 s vs
x86-64 3 s (1.4 s natively). Printed: trapline wall time per arch, their ratio, the native
time where the host runs the binary, and the cost of one guest store in a bare Unicorn
(default TLB: the slow path every time) and in a trapline Machine. Goal (issue 12): a guest store costs an inline TLB
hit (~2-3 ns), not Unicorn's slow path (~30 ns), and i386 stays within 10x of x86-64 (it runs
several times more instructions per trial division: a call, pushes and pops, up to three divs).
"""
import subprocess
import time
from pathlib import Path

from unicorn import UC_ARCH_X86, UC_MODE_32, UC_PROT_EXEC, UC_PROT_READ, UC_PROT_WRITE, Uc
from unicorn import x86_const as X

from emu.machine import Machine
from emu.memory import PROT_EXEC, PROT_READ, PROT_WRITE
from trapline import Sandbox

from .common import ROOT, best_of

NUMBER = "4611686018427387903"
ROOTFS = ROOT / "tests" / "e2e" / ".cache" / "debian" / "{arch}" / "root"
CODE, DATA, LOOPS = 0x10000, 0x20000, 2_000_000


def _trapline(rootfs: Path) -> tuple[float, bytes]:
    t0 = time.perf_counter()
    result = Sandbox(rootfs=str(rootfs), clear_env=True).run(["/bin/busybox", "factor", NUMBER])
    assert result.exit_code == 0, result
    return time.perf_counter() - t0, result.stdout


def _native(rootfs: Path) -> float | None:
    """The same binary run by the host (busybox is static), or None where it cannot run."""
    t0 = time.perf_counter()
    try:
        subprocess.run([str(rootfs / "bin" / "busybox"), "factor", NUMBER], check=True,
                       capture_output=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return time.perf_counter() - t0


def _store_loop() -> bytes:
    """LOOPS x (4 stores, dec, jnz) at CODE, then a nop: i386 encodings."""
    stores = bytes.fromhex("89 05 00 00 02 00 89 05 04 00 02 00 89 05 08 00 02 00 89 05 0c 00 02 00"
                           .replace(" ", ""))                       # mov [DATA+k], eax
    body = stores + b"\x49"                                            # dec ecx
    jnz = b"\x75" + bytes([(-(len(body) + 2)) & 0xFF])
    return b"\xb9" + LOOPS.to_bytes(4, "little") + body + jnz + b"\x90"


def _ns_per_store(run, empty_run) -> float:
    return (best_of(run)[0] - best_of(empty_run)[0]) / (4 * LOOPS) * 1e9


def _bare_store_cost() -> float:
    code = _store_loop()
    uc = Uc(UC_ARCH_X86, UC_MODE_32)
    uc.mem_map(CODE, 0x1000, UC_PROT_READ | UC_PROT_EXEC)
    uc.mem_map(DATA, 0x1000, UC_PROT_READ | UC_PROT_WRITE)
    uc.mem_write(CODE, code)
    end = CODE + len(code) - 1
    return _ns_per_store(lambda: uc.emu_start(CODE, end),
                         lambda: (uc.reg_write(X.UC_X86_REG_ECX, 1), uc.emu_start(CODE + 5, end)))


def _machine_store_cost() -> float:
    code = _store_loop()
    m = Machine("i386")
    m.mem.map(CODE, 0x1000, PROT_READ | PROT_EXEC)
    m.mem.map(DATA, 0x1000, PROT_READ | PROT_WRITE)
    m.mem.write(CODE, code + b"\xcc")                      # int3 ends the run
    return _ns_per_store(lambda: m.run(CODE),
                         lambda: (m.set_reg("ecx", 1), m.run(CODE + 5)))


def run() -> list[str]:
    lines, walls = [], {}
    for arch in ("amd64", "i386"):
        rootfs = Path(str(ROOTFS).format(arch=arch))
        if not (rootfs / "bin" / "busybox").exists():
            lines.append(f"{arch}: {rootfs}/bin/busybox missing (run tests/e2e/fetch_debian_bins.py)")
            continue
        walls[arch], out = _trapline(rootfs)
        native = _native(rootfs)
        native_text = f"{native:.2f} s" if native is not None else "n/a"
        lines.append(f"{arch:6s} factor {NUMBER}: trapline {walls[arch]:6.2f} s, native "
                     f"{native_text}   ({out.decode().strip()})")
    if len(walls) == 2:
        lines.append(f"i386 / x86-64 under trapline: {walls['i386'] / walls['amd64']:.1f}x")
    lines.append(f"one guest store (i386, data page): bare Unicorn {_bare_store_cost():.1f} ns, "
                 f"trapline Machine {_machine_store_cost():.1f} ns")
    return lines


if __name__ == "__main__":
    for line in run():
        print(line)
