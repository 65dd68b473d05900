"""Rewrite code.py from source.py: `python3 -m kernel_model.vdso.assemble`.

keystone (a dependency, but never imported by a run) assembles each function of source.py at
address 0: the code is position independent (relative jumps and calls, the clock page found
from the instruction pointer), so its bytes do not depend on where the image puts it. Beside
the bytes, code.py keeps each function's CFA rows (cfa_rows.py), which the image's .eh_frame
describes (eh_frame.py).
"""
import sys
from pathlib import Path

from kernel_model.vdso.cfa_rows import cfa_rows
from kernel_model.vdso.source import FUNCTIONS

CODE_FILE = Path(__file__).with_name("code.py")
_MODES = {"x86_64": "KS_MODE_64", "i386": "KS_MODE_32"}


def assemble(arch: str, text: str) -> bytes:
    import keystone
    engine = keystone.Ks(keystone.KS_ARCH_X86, getattr(keystone, _MODES[arch]))
    encoding, _ = engine.asm(text, 0)
    return bytes(encoding)


def code_text() -> str:
    lines = ['"""Machine code of the vDSO\'s functions, written by `python3 -m kernel_model.vdso.assemble`',
             'from source.py (do not edit by hand)."""', "", "CODE = {"]
    for arch, functions in FUNCTIONS.items():
        lines.append(f"    {arch!r}: {{")
        for name, _, text in functions:
            lines.append(f"        {name!r}: bytes.fromhex({assemble(arch, text).hex()!r}),")
        lines.append("    },")
    lines.append("}")
    lines += ["", "# (offset, CFA = stack pointer + this) where the CFA moves (cfa_rows.py)", "CFA_ROWS = {"]
    for arch, functions in FUNCTIONS.items():
        lines.append(f"    {arch!r}: {{")
        for name, _, text in functions:
            lines.append(f"        {name!r}: {cfa_rows(arch, assemble(arch, text))!r},")
        lines.append("    },")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main() -> int:
    CODE_FILE.write_text(code_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
