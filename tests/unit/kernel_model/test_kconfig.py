"""/proc/config.gz (kernel_model/kconfig.py): the modeled kernel's .config, gzip'd, which LTP's
library reads (`zcat /proc/config.gz`) to skip the tests whose features the kernel lacks."""
import gzip

from kernel_model import kconfig
from kernel_model.fs.constants import O_RDONLY
from kernel_model.syscalls.registry import declaration
from tests.unit.kernel_model.call_script import run_script


def test_a_guest_reads_the_configuration_from_proc(arch):
    """Before, /proc/config.gz did not exist (ENOENT): LTP reported "Couldn't locate kernel
    config" and broke every test that asks for an option."""
    results, buf, _ = run_script(arch, [
        ("open", "BUF", O_RDONLY),
        ("read", 3, "BUF+64", 2900),
        ("read", 3, "BUF+64", 16),
    ], data=b"/proc/config.gz\0")
    assert results[0] == 3 and 0 < results[1] < 2900 and results[2] == 0
    text = gzip.decompress(buf[64:64 + results[1]])
    lines = text.splitlines()
    assert lines[2] == b"# Linux/x86 6.1.0-trapline Kernel Configuration"
    assert b"CONFIG_EVENTFD=y" in lines and b"CONFIG_SYSVIPC=y" in lines and b"CONFIG_AIO=y" in lines
    assert b"# CONFIG_SWAP is not set" in lines and b"# CONFIG_BPF_SYSCALL is not set" in lines
    assert b"CONFIG_USER_NS=y" in lines and b"CONFIG_PID_NS=y" in lines and b"CONFIG_NET_NS=y" in lines


def test_an_option_gating_calls_is_set_exactly_when_they_are_all_implemented():
    set_options = unset_options = 0
    for option, calls in kconfig.GATED.items():
        implemented = all(declaration(call) is not None for call in calls)
        assert kconfig.enabled(option) == implemented, option
        set_options += implemented
        unset_options += not implemented
    assert set_options and unset_options


def test_every_option_is_listed_once_and_the_lists_do_not_overlap():
    always, never, gated = set(kconfig.ALWAYS), set(kconfig.NEVER), set(kconfig.GATED)
    assert not (always & never or always & gated or never & gated)
    lines = kconfig.config_text().splitlines()[4:]
    assert len(lines) == len(always | never | gated)
    assert all(kconfig.enabled(option) for option in always)
    assert not any(kconfig.enabled(option) for option in never)


def test_the_file_is_the_same_bytes_in_every_run():
    """gzip's header holds no time (MTIME 0) and no file name (FLG 0: RFC 1952 2.3)."""
    data = kconfig.config_gz()
    assert data[:4] == b"\x1f\x8b\x08\x00" and data[4:8] == b"\0\0\0\0"
    assert gzip.decompress(data) == kconfig.config_text()
