"""A guest memory made of a few byte regions, implementing trapline.strace.strings.MemReader."""


class FakeMemory:
    def __init__(self, regions: dict[int, bytes] | None = None):
        self.regions = dict(regions or {})

    def put(self, addr: int, data: bytes) -> int:
        self.regions[addr] = data
        return addr

    def read(self, addr: int, n: int) -> bytes | None:
        for base, data in self.regions.items():
            if base <= addr and addr + n <= base + len(data):
                return data[addr - base:addr - base + n]
        return None

    def read_cstr(self, addr: int, limit: int) -> bytes | None:
        for base, data in self.regions.items():
            if base <= addr < base + len(data):
                tail = data[addr - base:addr - base + limit]
                return tail.split(b"\0", 1)[0]
        return None
