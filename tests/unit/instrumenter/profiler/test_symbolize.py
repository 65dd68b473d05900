"""instrumenter/profiler/symbolize.py with a stand-in of the debug interface: objects by their
symbols, tool pages and run-time code by their areas, return addresses by their call."""
from types import SimpleNamespace

from instrumenter.profiler.symbolize import Symbolizer
from kernel_model.debug import PROT_EXEC, PROT_READ, PROT_WRITE
from loader.symbols import Symbol, SymbolTable

PROGRAM = SimpleNamespace(path="prog", load_bias=0,
                          symbols=SymbolTable([Symbol("main", 0x1000, 0x40, "func"),
                                               Symbol("work", 0x1040, 0x20, "func"),
                                               Symbol("_start", 0x1080, 0, "func"),
                                               Symbol("after", 0x10A0, 0x10, "func")]))
STRIPPED = SimpleNamespace(path="libx.so", load_bias=0x8000, symbols=SymbolTable([]))


class Door:
    def __init__(self):
        self.objects = [SimpleNamespace(name="prog", base=0x1000, end=0x2000, image=PROGRAM),
                        SimpleNamespace(name="libx.so", base=0x8000, end=0x9000, image=STRIPPED)]
        self.areas = [SimpleNamespace(start=0x20000, end=0x21000, perms=PROT_READ | PROT_EXEC, name=b"[uprobes]"),
                      SimpleNamespace(start=0x30000, end=0x31000, perms=PROT_READ | PROT_WRITE | PROT_EXEC, name=b""),
                      SimpleNamespace(start=0x40000, end=0x41000, perms=PROT_READ | PROT_EXEC, name=b"[vdso]")]

    def images(self, process):
        return self.objects

    def image_map_version(self, process):
        return (0, len(self.objects))           # the objects never change under one Door

    def area_at(self, process, address):
        return next((a for a in self.areas if a.start <= address < a.end), None)


def _names(*addresses):
    return [(f.module, f.name, f.offset) for f in Symbolizer(Door()).frames(None, addresses)]


def test_the_pc_and_the_return_addresses():
    # 0x1040 as a return address is after a call that ended main: it is named by the call
    assert _names(0x1045, 0x1040) == [("prog", "work", 5), ("prog", "main", 0x40)]


def test_a_sizeless_symbol_names_up_to_the_next_function():
    """musl's `_start` is assembly without a size: its addresses are its own, as gdb says;
    past a sized function's end and before the next there is no name."""
    assert _names(0x1085, 0x10A5, 0x1065) == [("prog", "_start", 5), ("prog", "after", 5),
                                              ("prog", "prog+0x65", 0x65)]


def test_an_object_without_symbols_gives_module_and_offset():
    assert _names(0x8123) == [("libx.so", "libx.so+0x123", 0x123)]


def test_tool_pages_run_time_code_and_the_vdso_are_named_by_their_area():
    assert _names(0x20010, 0x30011, 0x40012, 0x90000) == [
        ("[tool:uprobes]", "[tool:uprobes]+0x10", 0x10), ("[jit]", "[jit]+0x11", 0x11),
        ("[vdso]", "[vdso]+0x12", 0x12), ("[unknown]", "[unknown]+0x90000", 0x90000)]


class FdeFunctions:
    """callsite.Functions' FDE half, stand-in: libx.so's code from 0x8100 to 0x8200 is one
    function that no symbol names."""

    def by_fde(self, process, mapped, address):
        from instrumenter.profiler.callers import FunctionId
        if mapped.name == "libx.so" and 0x8100 <= address < 0x8200:
            return FunctionId("libx.so", "libx.so+0x100", 0x8100)
        return None


def test_stripped_code_is_named_by_the_function_its_fde_bounds():
    """A report counts stripped code per function, as the walk-up finds and names it, not per
    address (gzip's longest_match was forty rows of one to seventeen percent)."""
    frames = Symbolizer(Door(), FdeFunctions()).frames(None, (0x8123, 0x8180, 0x8300, 0x1045))
    assert [(f.module, f.name, f.offset) for f in frames] == [
        ("libx.so", "libx.so+0x100", 0x23), ("libx.so", "libx.so+0x100", 0x80),
        ("libx.so", "libx.so+0x300", 0x300), ("prog", "work", 5)]


def test_names_follow_the_image_map_version():
    """An object mapped over another's range (dlclose, then dlopen of another there) is named
    as soon as the map's version changes, never from the names taken before."""
    door = Door()
    symbolizer = Symbolizer(door)
    assert symbolizer.frames(None, (0x8123,))[0].module == "libx.so"
    door.objects[1] = SimpleNamespace(name="liby.so", base=0x8000, end=0x9000, image=STRIPPED)
    door.image_map_version = lambda process: (0, 99)
    assert symbolizer.frames(None, (0x8123,))[0].module == "liby.so"
