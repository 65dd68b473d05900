"""The target description GDB reads with qXfer:features:read:target.xml.

Written from the GDB manual ("Target Descriptions", "Standard Target Features", i386 Features):
the architecture (i386 or i386:x86-64), the GNU/Linux OS ABI, and four features —
org.gnu.gdb.i386.core (general registers, PC, eflags, selectors, the x87 stack and control
registers), org.gnu.gdb.i386.sse (xmm0-7/15, mxcsr), org.gnu.gdb.i386.linux (orig_eax/orig_rax,
which GDB needs to restart an interrupted system call) and org.gnu.gdb.i386.segments (fs_base,
gs_base). The registers, their order and sizes come from instrumenter/debugger/registers.py,
the same list the `g` packet is built from, so that the reply is exactly as long as GDB
expects. The flags and vector types are defined here as the manual's feature descriptions do.
"""
from instrumenter.debugger.registers import CORE, SSE, layout

_EFLAGS = (("CF", 0), ("", 1), ("PF", 2), ("AF", 4), ("ZF", 6), ("SF", 7), ("TF", 8),
           ("IF", 9), ("DF", 10), ("OF", 11), ("NT", 14), ("RF", 16), ("VM", 17), ("AC", 18),
           ("VIF", 19), ("VIP", 20), ("ID", 21))
_MXCSR = (("IE", 0), ("DE", 1), ("ZE", 2), ("OE", 3), ("UE", 4), ("PE", 5), ("DAZ", 6),
          ("IM", 7), ("DM", 8), ("ZM", 9), ("OM", 10), ("UM", 11), ("PM", 12), ("FZ", 15))
_VECTORS = (("v8bf16", "bfloat16", 8), ("v8h", "ieee_half", 8), ("v4f", "ieee_single", 4),
            ("v2d", "ieee_double", 2), ("v16i8", "int8", 16), ("v8i16", "int16", 8),
            ("v4i32", "int32", 4), ("v2i64", "int64", 2))
_UNION = (("v8_bfloat16", "v8bf16"), ("v8_half", "v8h"), ("v4_float", "v4f"),
          ("v2_double", "v2d"), ("v16_int8", "v16i8"), ("v8_int16", "v8i16"),
          ("v4_int32", "v4i32"), ("v2_int64", "v2i64"), ("uint128", "uint128"))


def _flags(name: str, fields) -> list[str]:
    lines = [f'  <flags id="{name}" size="4">']
    lines += [f'    <field name="{field}" start="{bit}" end="{bit}"/>' for field, bit in fields]
    return lines + ["  </flags>"]


def _types(feature: str) -> list[str]:
    if feature == CORE:
        return _flags("i386_eflags", _EFLAGS)
    if feature == SSE:
        lines = [f'  <vector id="{vid}" type="{base}" count="{count}"/>' for vid, base, count in _VECTORS]
        lines.append('  <union id="vec128">')
        lines += [f'    <field name="{name}" type="{vid}"/>' for name, vid in _UNION]
        lines.append("  </union>")
        return lines + _flags("i386_mxcsr", _MXCSR)
    return []


def target_xml(arch: str) -> bytes:
    regs = layout(arch)
    lines = ['<?xml version="1.0"?>', '<!DOCTYPE target SYSTEM "gdb-target.dtd">', "<target>",
             f"  <architecture>{'i386:x86-64' if arch == 'x86_64' else 'i386'}</architecture>",
             "  <osabi>GNU/Linux</osabi>"]
    features: list[str] = []
    for reg in regs:
        if reg.feature not in features:
            features.append(reg.feature)
    for feature in features:
        lines.append(f'  <feature name="{feature}">')
        lines += ["  " + line for line in _types(feature)]
        for number, reg in enumerate(regs):
            if reg.feature != feature:
                continue
            group = f' group="{reg.group}"' if reg.group else ""
            lines.append(f'    <reg name="{reg.name}" bitsize="{reg.bits}" type="{reg.type}" '
                         f'regnum="{number}"{group}/>')
        lines.append("  </feature>")
    lines.append("</target>")
    return ("\n".join(lines) + "\n").encode()
