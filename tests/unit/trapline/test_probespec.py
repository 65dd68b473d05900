"""Probe specs in bpftrace form, and one-line errors for bad ones."""
import pytest

from instrumenter.probes.definitions import SYSCALL, UPROBE, URETPROBE
from trapline.errors import UsageError
from trapline.probespec import parse_probe_spec


@pytest.mark.parametrize("text,kind,binary,function,offset,address,syscall", [
    ("uprobe:/bin/fib:fib", UPROBE, "/bin/fib", "fib", 0, None, ""),
    ("uprobe:fib:fib+0x4", UPROBE, "fib", "fib", 4, None, ""),
    ("uprobe:fib:main+12", UPROBE, "fib", "main", 12, None, ""),
    ("uprobe:/bin/fib:0x401000", UPROBE, "/bin/fib", None, 0, 0x401000, ""),
    ("uretprobe:/bin/fib:fib", URETPROBE, "/bin/fib", "fib", 0, None, ""),
    ("syscall:openat", SYSCALL, "", None, 0, None, "openat"),
    ("uprobe:C:/x:y:fib", UPROBE, "C:/x:y", "fib", 0, None, ""),     # the last colon separates
])
def test_valid_specs(text, kind, binary, function, offset, address, syscall):
    spec = parse_probe_spec(text)
    assert (spec.text, spec.kind, spec.binary, spec.function, spec.offset, spec.address, spec.syscall) == \
        (text, kind, binary, function, offset, address, syscall)


@pytest.mark.parametrize("text,fragment", [
    ("fib", "expected uprobe:BIN:FUNC"),
    ("kprobe:do_sys_open", "unknown probe type 'kprobe'"),
    ("uprobe:fib", "expected"),
    ("uprobe::fib", "expected"),
    ("uprobe:fib:", "expected"),
    ("uprobe:fib:9fib", "is not a symbol name"),
    ("uprobe:fib:fib+zz", "bad offset 'zz'"),
    ("uretprobe:fib:fib+4", "uretprobe takes no offset"),
    ("uretprobe:fib:0x1000", "uretprobe needs a function name"),
    ("syscall:", "needs a syscall name"),
    ("syscall:Open At", "needs a syscall name"),
    ("syscall:wrte", "no Linux syscall is named 'wrte'"),
])
def test_bad_specs_give_one_line_errors(text, fragment):
    with pytest.raises(UsageError) as info:
        parse_probe_spec(text)
    message = str(info.value)
    assert fragment in message and "\n" not in message and repr(text) in message


def test_binary_matching_by_path_or_file_name():
    spec = parse_probe_spec("uprobe:/bin/fib:fib")
    assert spec.matches_binary(b"/bin/fib")
    assert spec.matches_binary(b"/opt/other/fib")
    assert not spec.matches_binary(b"/bin/fibber")


@pytest.mark.parametrize("name", ["socketcall", "arch_prctl", "openat", "mmap2"])
def test_syscall_names_of_either_abi_are_accepted(name):
    assert parse_probe_spec(f"syscall:{name}").syscall == name
