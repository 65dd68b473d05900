"""sethostname/setdomainname change the run's UTS name and uname (and i386's olduname and
oldolduname) report it; the checks of kernel/sys.c."""
from kernel_model import errno as E

from ...call_script import run_script

FIELD = 65


def fields(buf: bytes, count: int = 6, size: int = FIELD) -> list[bytes]:
    return [buf[i * size:(i + 1) * size].split(b"\0", 1)[0] for i in range(count)]


def test_uname_reports_what_sethostname_and_setdomainname_set(arch):
    results, buf, kernel = run_script(arch, [
        ("sethostname", "/prog", 5), ("setdomainname", "/tmp/new", 4), ("uname", "BUF")])
    assert results == [0, 0, 0]
    sysname, nodename, release, _version, machine, domain = fields(buf)
    assert (sysname, nodename, domain) == (b"Linux", b"/prog", b"/tmp")
    assert machine == (b"i686" if arch == "i386" else b"x86_64")
    assert kernel.uts.nodename == b"/prog"


def test_a_name_of_64_bytes_fills_the_field_and_65_is_einval(arch):
    results, buf, _ = run_script(arch, [
        ("sethostname", "a" * 300, 64), ("uname", "BUF"), ("sethostname", "/f", 65),
        ("sethostname", "/f", -1), ("setdomainname", "/f", 0x100000000 + 2)])
    assert results == [0, 0, -E.EINVAL, -E.EINVAL, 0]     # len is a C int: 2^32 + 2 is 2
    assert fields(buf)[1] == b"a" * 64


def test_bad_pointers_are_efault_and_change_nothing(arch):
    results, buf, _ = run_script(arch, [
        ("sethostname", 0x10, 4), ("sethostname", "RO", 0), ("uname", "BUF"), ("uname", 0x10)])
    assert results == [-E.EFAULT, 0, 0, -E.EFAULT]
    assert fields(buf)[1] == b""                          # length 0: an empty hostname


def test_the_i386_old_unames():
    results, buf, _ = run_script("i386", [
        ("sethostname", "/dev/urandom", 12), ("olduname", "BUF"), ("oldolduname", "BUF+512"),
        ("oldolduname", 0)])
    assert results == [0, 0, 0, -E.EFAULT]
    assert fields(buf, 5) == [b"Linux", b"/dev/urandom", b"6.1.0-trapline",
                              b"#1 SMP PREEMPT_DYNAMIC trapline", b"i686"]
    # struct oldold_utsname: char[9] fields, names cut to 8 bytes
    assert fields(buf[512:], 5, 9) == [b"Linux", b"/dev/ura", b"6.1.0-tr", b"#1 SMP P", b"i686"]


def test_only_a_process_with_cap_sys_admin_names_the_machine(arch):
    """kernel/sys.c sethostname and setdomainname check ns_capable(CAP_SYS_ADMIN) before the
    length (LTP setdomainname03 and sethostname03: root with euid nobody gets EPERM; before,
    the names were set)."""
    setresuid = "setresuid32" if arch == "i386" else "setresuid"
    keep = 0xFFFFFFFF
    results, buf, _ = run_script(arch, [
        (setresuid, keep, 65534, keep), ("sethostname", "/prog", 5),
        ("setdomainname", "/tmp/new", 4), ("setdomainname", "/f", 65),
        (setresuid, keep, 0, keep), ("setdomainname", "/tmp/new", 4), ("uname", "BUF")])
    assert results == [0, -E.EPERM, -E.EPERM, -E.EPERM, 0, 0, 0]
    assert fields(buf)[1] == b"trapline" and fields(buf)[5] == b"/tmp"
