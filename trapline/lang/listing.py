"""`trapline trace -l PATTERN [-- CMD ARGS]`: the probes there are, one a line, as `bpftrace -l`
lists them, PATTERN with shell wildcards.

  tracepoint:syscalls:sys_enter_NAME / sys_exit_NAME   every system call of either ABI's table
  uprobe:PATH:FUNC                                      each function symbol of PATH (the BIN of
                                                        the pattern, read from the host), or,
                                                        with -- CMD, of every object CMD maps in
                                                        its run (the program, ld.so, its libraries)
  BEGIN, END, interval:, profile:, proc:, signal:       not listed (bpftrace lists no BEGIN either)
"""
import fnmatch
import os

from ..probespec import SYSCALL_NAMES


def tracepoints() -> list[str]:
    return [f"tracepoint:syscalls:sys_{side}_{name}"
            for name in sorted(SYSCALL_NAMES) for side in ("enter", "exit")]


def object_functions(path: str, image) -> list[str]:
    names = sorted({symbol.name for symbol in image.symbols.functions()})
    return [f"uprobe:{path}:{name}" for name in names]


def file_functions(path: str) -> list[str]:
    """The function symbols of the ELF file at host `path` (.symtab, else .dynsym), read as
    bpftrace reads a binary it lists; empty if it is not an ELF file."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile
    try:
        with open(path, "rb") as stream:
            elf = ELFFile(stream)
            table = elf.get_section_by_name(".symtab") or elf.get_section_by_name(".dynsym")
            names = sorted({symbol.name for symbol in (table.iter_symbols() if table else ())
                            if symbol.name and symbol["st_info"]["type"] in ("STT_FUNC", "STT_GNU_IFUNC")
                            and symbol["st_shndx"] != "SHN_UNDEF"})
    except (OSError, ELFError):
        return []
    return [f"uprobe:{path}:{name}" for name in names]


def mapped_functions(argv: list[str], sandbox_options: dict) -> list[str]:
    """The functions of every object the program maps in a run (the run's output discarded)."""
    from ..sandbox import Sandbox
    seen: dict[str, object] = {}

    def watch(kernel, process):
        class Mapped:
            def image_mapped(self, process, mapped):
                remember(mapped)

        def remember(mapped):
            if mapped.image is not None:
                seen.setdefault(mapped.path.decode(errors="replace"), mapped.image)
        for mapped in kernel.debug.images(process):
            remember(mapped)
        kernel.debug.subscribe(Mapped())

    Sandbox(**sandbox_options, capture=True, tools=[watch]).run(argv)
    return [line for path in sorted(seen) for line in object_functions(path, seen[path])]


def listing(pattern: str, argv: list[str], sandbox_options: dict) -> list[str]:
    candidates = tracepoints()
    provider, _, rest = pattern.partition(":")
    if argv:
        candidates += mapped_functions(argv, sandbox_options)
    elif provider in ("uprobe", "uretprobe", "u", "ur") and ":" in rest:
        binary = rest.rpartition(":")[0]
        if os.path.exists(binary):
            candidates += file_functions(binary)
    if provider in ("uretprobe", "ur"):
        candidates = [c.replace("uprobe:", "uretprobe:", 1) for c in candidates
                      if c.startswith("uprobe:")]
    elif provider == "u":
        pattern = "uprobe:" + rest
    elif provider == "t":
        pattern = "tracepoint:" + rest
    return [c for c in candidates if fnmatch.fnmatchcase(c, pattern) or
            fnmatch.fnmatchcase(c, pattern.replace("uretprobe:", "uprobe:", 1))]
