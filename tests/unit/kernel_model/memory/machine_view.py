"""What the Machine should map for an AreaMap: every area with its permissions, merged where
adjacent areas have equal ones, less the PROT_NONE parts the map left without pages (a
never-touched PROT_NONE area: kernel_model/memory/vm.py map_area). Shared by the unit tests
and the hypothesis properties of the page mapper."""


def expected_regions(vm, window=(0, 1 << 64)) -> list[tuple[int, int, int]]:
    merged: list[list[int]] = []
    for v in vm.vmas:
        if not window[0] <= v.start < window[1]:
            continue
        parts = [(v.start, v.end)] if v.perms else vm.backed_parts(v.start, v.end)
        for lo, hi in parts:
            if merged and merged[-1][1] == lo and merged[-1][2] == v.perms:
                merged[-1][1] = hi
            else:
                merged.append([lo, hi, v.perms])
    return [tuple(r) for r in merged]


def assert_matches_machine(vm, window=(0, 1 << 64)) -> None:
    """The VMA list and the emulator's mapped regions describe the same memory (those of them
    that start in `window`: a Space also maps its kernel region, which is no area)."""
    regions = [r for r in vm.machine.mem.regions() if window[0] <= r[0] < window[1]]
    assert expected_regions(vm, window) == regions
