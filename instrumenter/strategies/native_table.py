"""A native keyed aggregation: an open-addressing hash table of integer keys in a guest data
page, updated by code in the trampoline part (native.py's third action, NativeSpec kind
"table"), so `@[arg0] = count()`, `@[arg0, arg1] = sum(arg2)`, min, max and avg never leave
the emulator on a hit.

The table: `entries` (a power of two) entries of ENTRY bytes, zero when empty:
  x86-64  +0 state  +8 key0  +16 key1  +24 count  +32 sum (128 bits)  +48 min  +56 max
  i386    +0 state  +4 key0  +8 key1   +12 min    +16 max  +24 count (64)  +32 sum (64)
Keys, sum, min and max are of the argument words as the tool reads them (unsigned, the
word's size: instrumenter/probes/context.py argument_words); the sum is wide enough to be
exact (x86-64: add/adc into 128 bits; i386: 32-bit words into 64 bits) and min starts at all
ones when an entry is claimed, so min and max are unsigned compares (SDM Vol. 2A, Jcc: JAE/JBE).

A hit: the keys are hashed (a multiplicative hash, Knuth's TAOCP 6.4: the top bits of
key * an odd constant), then up to MAX_PROBES entries are probed linearly: an entry holding
the keys is updated, an empty one is claimed (keys stored, then state = 1). The lookup and the
claim are one restartable sequence (kernel_model/debug/restartable.py) that commits with the
state store, so a thread switched out half-way never leaves an entry claimed with half its
keys; the updates after it are single locked instructions (a lock cmpxchg loop for min and
max, SDM Vol. 2A, CMPXCHG), atomic whatever thread runs between them.

When the probes find neither the keys nor an empty entry (the table is full, or its keys
cluster), the hit traps (an int3 before the sequence): the collector reads the whole table
into the tool, zeroes it and sends the thread back to the sequence's start, where the hit
claims an entry of the empty table. Nothing is lost and what happens depends only on the
keys' order (native_collector.py; the tool merges each drained table into its maps).

The code is assembled with keystone, once per part.
"""
import struct
from dataclasses import dataclass

from ..insn.emit import RED_ZONE, Emitter

ENTRY = 64                       # bytes an entry takes on both architectures
MAX_PROBES = 16                  # entries looked at before a hit drains the table
DEFAULT_ENTRIES = 512           # 32 KiB a probe; more keys than fit drain (module docstring)
PART_ROOM = 384                  # bytes a table part may take (native.part_room)
# Fibonacci hashing's multipliers (2^w / golden ratio, odd): a second key uses another so
# that (a, b) and (b, a) part
_MULTIPLIERS = {"x86_64": (0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F), "i386": (0x9E3779B1, 0x85EBCA77)}
OPERATIONS = ("count", "sum", "min", "max")
_LAYOUT = {"x86_64": {"state": 0, "key0": 8, "key1": 16, "count": 24, "sum": 32, "min": 48, "max": 56},
           "i386": {"state": 0, "key0": 4, "key1": 8, "min": 12, "max": 16, "count": 24, "sum": 32}}


@dataclass(frozen=True)
class TableSpec:
    keys: tuple[int, ...]        # argument indices of the key words, 0 to 2 of them
    value: int | None            # argument index of the value word (sum/min/max), None: count only
    operations: frozenset        # of OPERATIONS: what the blocks need kept ("count" always)
    entries: int = DEFAULT_ENTRIES

    @property
    def words(self) -> int:
        """Argument words the action reads (NativeSpec.nargs: the Python path reads as many)."""
        return max((*self.keys, -1 if self.value is None else self.value)) + 1


def table_bytes(spec: TableSpec) -> int:
    return spec.entries * ENTRY


# ---- the guest's code ---------------------------------------------------------------------
def emit_table_body(e: Emitter, slot, arch: str) -> None:
    """The lookup sequence and the updates for a table slot, at e.here: native.emit_part has
    moved the stack below the red zone, saved the flags and (e/r)ax and run the guard, and
    restores them after. slot.sequence gets the sequence's start, its commit and the drain
    trap as offsets from `e`'s first byte."""
    table = slot.spec.table
    push, pop = ("push r11; push r10", "pop r10; pop r11") if arch == "x86_64" else \
        ("push ecx; push edx; push ebx", "pop ebx; pop edx; pop ecx")
    e.raw(_assemble(push, arch, e.here))
    trap = e.here + 2                             # jmp start (2 bytes), then the int3
    code = _assemble(f"jmp start; full: int3; start: {_lookup_source(table, slot.array, arch)}",
                     arch, e.here)
    commit = e.here + len(code) - len(_assemble(_COMMIT[arch], arch))
    e.raw(code)
    e.raw(_assemble(_update_source(table, arch) + "; " + pop, arch, e.here))
    slot.sequence = (trap + 1 - e.address, commit - e.address, trap - e.address)


_KS: dict = {}


def _assemble(source: str, arch: str, address: int = 0) -> bytes:
    """Intel syntax -> bytes at `address` (keystone, imported by the first table part:
    page_layout.assemble does the same for the glue; importing it here would make an import
    cycle, native -> native_table -> page_layout -> native)."""
    from keystone import KS_ARCH_X86, KS_MODE_32, KS_MODE_64, Ks
    mode = KS_MODE_32 if arch == "i386" else KS_MODE_64
    ks = _KS.get(mode) or _KS.setdefault(mode, Ks(KS_ARCH_X86, mode))
    return bytes(ks.asm(source, address)[0])


_COMMIT = {"x86_64": "mov qword ptr [r11], 1", "i386": "mov dword ptr [ecx], 1"}
_ARGS_64 = ("rdi", "rsi", "rdx", "rcx", "r8", "r9")        # System V AMD64 psABI 3.2.3
# i386: the argument words in the caller's frame (System V i386 psABI 2.2), above the return
# address, with the stack moved by the red zone, the flag image and eax (SAVE_FLAGS), and the
# three registers pushed here
_DEPTH_32 = RED_ZONE + 8 + 12


def _arg_32(index: int) -> str:
    return f"dword ptr [esp + {_DEPTH_32 + 4 + 4 * index}]"


def _lookup_source(table: TableSpec, base: int, arch: str) -> str:
    """Intel-syntax text of the hash, the probing loop and the claim; it ends with the commit
    (the sequence's last instruction) and falls through into the updates."""
    bits = (table.entries.bit_length() - 1)
    mask = table.entries * ENTRY - 1
    at = _LAYOUT[arch]
    m1, m2 = _MULTIPLIERS[arch]
    if arch == "x86_64":
        key = [_ARGS_64[i] for i in table.keys]
        hashing = ["xor eax, eax"] if not key else [f"movabs rax, {m1}", f"imul rax, {key[0]}"]
        if len(key) == 2:
            hashing += [f"movabs r10, {m2}", f"imul r10, {key[1]}", "xor rax, r10"]
        if key:
            hashing += [f"shr rax, {64 - bits}" if bits else "xor eax, eax", "shl rax, 6"]
        match = [f"cmp qword ptr [r11 + {at[f'key{i}']}], {k}; jne next" for i, k in enumerate(key)]
        claim = [f"mov qword ptr [r11 + {at[f'key{i}']}], {k}" for i, k in enumerate(key)]
        if "min" in table.operations:
            claim.append(f"mov qword ptr [r11 + {at['min']}], -1")
        lines = hashing + [f"mov r10d, {MAX_PROBES}",
                           f"probe: movabs r11, {base}", "add r11, rax",
                           "cmp qword ptr [r11], 0", "je claim", *match, "jmp found",
                           f"next: add eax, {ENTRY}", f"and eax, {mask}", "dec r10d", "jnz probe",
                           "jmp full",
                           "claim:", *claim, _COMMIT[arch], "found:"]
        return "; ".join(lines)
    hashing = ["xor eax, eax"]
    if table.keys:
        hashing = [f"mov eax, {_arg_32(table.keys[0])}", f"imul eax, eax, {m1}"]
    if len(table.keys) == 2:
        hashing += [f"mov edx, {_arg_32(table.keys[1])}", f"imul edx, edx, {m2}", "xor eax, edx"]
    if table.keys:
        hashing += [f"shr eax, {32 - bits}" if bits else "xor eax, eax", "shl eax, 6"]
    match, claim = [], []
    for i, k in enumerate(table.keys):
        match += [f"mov edx, {_arg_32(k)}", f"cmp dword ptr [ecx + {at[f'key{i}']}], edx", "jne next"]
        claim += [f"mov edx, {_arg_32(k)}", f"mov dword ptr [ecx + {at[f'key{i}']}], edx"]
    if "min" in table.operations:
        claim.append(f"mov dword ptr [ecx + {at['min']}], -1")
    lines = hashing + [f"mov ebx, {MAX_PROBES}",
                       f"probe: lea ecx, [eax + {base}]",
                       "cmp dword ptr [ecx], 0", "je claim", *match, "jmp found",
                       f"next: add eax, {ENTRY}", f"and eax, {mask}", "dec ebx", "jnz probe",
                       "jmp full",
                       "claim:", *claim, _COMMIT[arch], "found:"]
    return "; ".join(lines)


def _update_source(table: TableSpec, arch: str) -> str:
    """The updates of the entry found or claimed (r11 / ecx points at it), each atomic."""
    at, ops = _LAYOUT[arch], table.operations
    if arch == "x86_64":
        entry, acc, lines = "r11", "rax", [f"lock inc qword ptr [r11 + {at['count']}]"]
        value = _ARGS_64[table.value] if table.value is not None else None
        if "sum" in ops:
            lines += [f"lock add qword ptr [r11 + {at['sum']}], {value}",
                      f"lock adc qword ptr [r11 + {at['sum'] + 8}], 0"]
        size = "qword"
    else:
        entry, acc = "ecx", "eax"
        lines = [f"lock add dword ptr [ecx + {at['count']}], 1", f"lock adc dword ptr [ecx + {at['count'] + 4}], 0"]
        value = "edx" if table.value is not None else None
        if value is not None:
            lines.append(f"mov edx, {_arg_32(table.value)}")
        if "sum" in ops:
            lines += [f"lock add dword ptr [ecx + {at['sum']}], edx",
                      f"lock adc dword ptr [ecx + {at['sum'] + 4}], 0"]
        size = "dword"
    for op, keep in (("min", "jae"), ("max", "jbe")):
        if op in ops:
            # cmpxchg loop: the stored bound is replaced only if it is still what was compared
            # (another thread may have lowered/raised it since: cmpxchg then reloads it)
            lines += [f"mov {acc}, {size} ptr [{entry} + {at[op]}]",
                      f"{op}_again: cmp {value}, {acc}", f"{keep} {op}_done",
                      f"lock cmpxchg {size} ptr [{entry} + {at[op]}], {value}",
                      f"jne {op}_again", f"{op}_done:"]
    return "; ".join(lines)


# ---- reading it back ---------------------------------------------------------------------
@dataclass(frozen=True)
class TableRow:
    keys: tuple
    count: int
    sum: int
    min: int
    max: int


def read_rows(raw: bytes, table: TableSpec, arch: str) -> list[TableRow]:
    """The claimed entries of a table's bytes, in table order."""
    at, rows = _LAYOUT[arch], []
    word = "<Q" if arch == "x86_64" else "<I"
    claimed = raw[at["state"]::ENTRY]            # each entry's state byte (1 once claimed)
    for index in (i for i, state in enumerate(claimed) if state):
        base = index * ENTRY
        entry = raw[base:base + ENTRY]
        keys = tuple(struct.unpack_from(word, entry, at[f"key{i}"])[0] for i in range(len(table.keys)))
        count = struct.unpack_from("<Q", entry, at["count"])[0]
        if arch == "x86_64":
            low, high = struct.unpack_from("<QQ", entry, at["sum"])
            total = low | high << 64
        else:
            total = struct.unpack_from("<Q", entry, at["sum"])[0]
        low_bound = struct.unpack_from(word, entry, at["min"])[0]
        high_bound = struct.unpack_from(word, entry, at["max"])[0]
        rows.append(TableRow(keys, count, total, low_bound, high_bound))
    return rows


def collect_table(collector, view, slot, pid: int) -> None:
    """Hand a table's entries to the session's buffers (one row an entry: its keys and its
    count, sum, min, max as `args`, kind "table"), credit the probe its hits, zero the table
    (native_collector.py calls it at collections and at the drain trap)."""
    debug, table = collector.debug, slot.spec.table
    arch = debug.arch(view).name
    raw = debug.read_memory(view, slot.array, table_bytes(table))
    rows = read_rows(raw, table, arch)
    if not rows:
        return
    debug.write_memory(view, slot.array, bytes(len(raw)))
    ts = debug.instructions_retired(view)
    for row in rows:
        collector.session.buffers.put((ts, pid, 0, slot.hook.probe.spec.text, slot.site,
                                       (*row.keys, row.count, row.sum, row.min, row.max),
                                       None, "table", slot.name))
    collector._credit(slot, pid, sum(row.count for row in rows))
