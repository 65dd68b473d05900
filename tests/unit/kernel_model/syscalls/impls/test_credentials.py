"""The set*id family on both ABIs (kernel/sys.c), with the capability sets following the ids
(commoncap.c cap_emulate_setxuid, the fsuid fix-up) and capset's rules; i386's 16-bit calls
(kernel/uid16.c). Before, every set*id call succeeded without changing anything (or was
ENOSYS) and every get*id answered 0."""
import struct

from kernel_model import errno as E

from ...call_script import run_script

NO_ID = 0xFFFFFFFF
V3 = 0x20080522
CAP_FS_LOW = 0x0800021F        # CAP_FS_SET's low word: chown..fsetid, linux_immutable, mknod


def wide(arch, name):
    """The 32-bit call: i386's carries the "32" suffix, x86-64's has no other."""
    return name + "32" if arch == "i386" else name


def ids(buf, at=0):
    return struct.unpack_from("<3I", buf, at)


def test_an_unprivileged_process_moves_only_among_its_ids(arch):
    w = lambda name: wide(arch, name)       # noqa: E731
    results, buf, _ = run_script(arch, [
        (w("setresuid"), 100, 200, 300),             # root: anything
        (w("getresuid"), "BUF", "BUF+4", "BUF+8"),
        (w("setuid"), 0),                            # no uid 0 left, no CAP_SETUID
        (w("setuid"), 300),                          # the saved one
        (w("setreuid"), NO_ID, 100),                 # the real one
        (w("setresuid"), 400, NO_ID, NO_ID),
        (w("setfsuid"), 500),                        # refused: answers the old fsuid
        (w("setfsuid"), 300),                        # the saved one: accepted
        (w("getresuid"), "BUF+12", "BUF+16", "BUF+20"),
        ("capget", "BUF+32", "BUF+40"),
        (w("setgid"), 5),                            # no CAP_SETGID either
        (w("geteuid"),), (w("getuid"),),
    ], data=b"\0" * 32 + struct.pack("<Ii", V3, 0))
    assert results == [0, 0, -E.EPERM, 0, 0, -E.EPERM, 100, 100, 0, 0, -E.EPERM, 100, 100]
    assert ids(buf) == (100, 200, 300)
    assert ids(buf, 12) == (100, 100, 300)       # euid back to the real uid: saved uid kept
    assert struct.unpack_from("<6I", buf, 40) == (0,) * 6     # capabilities gone


def test_root_s_effective_uid_round_trip(arch):
    """An effective uid leaving 0 clears the effective set, coming back restores it from the
    permitted one, which a real uid of 0 kept; setfsuid moves the file-system set alone."""
    w = lambda name: wide(arch, name)       # noqa: E731
    results, buf, _ = run_script(arch, [
        (w("setreuid"), NO_ID, 1000),
        ("capget", "BUF+64", "BUF"),
        (w("setreuid"), NO_ID, 0),                   # allowed: the real uid is 0
        (w("getresuid"), "BUF+12", "BUF+16", "BUF+20"),
        (w("setfsuid"), 1000),
        ("capget", "BUF+64", "BUF+24"),
        (w("setfsuid"), 0),
        ("capget", "BUF+64", "BUF+48"),
    ], data=b"\0" * 64 + struct.pack("<Ii", V3, 0))
    assert results == [0, 0, 0, 0, 0, 0, 1000, 0]
    effective, permitted = struct.unpack_from("<II", buf, 0)
    assert effective == 0 and permitted == 0xFFFFFFFF
    assert ids(buf, 12) == (0, 0, 1000)          # euid 0 is the real uid: saved unchanged
    effective, permitted = struct.unpack_from("<II", buf, 24)
    assert effective == 0xFFFFFFFF & ~CAP_FS_LOW and permitted == 0xFFFFFFFF
    assert struct.unpack_from("<I", buf, 48)[0] == 0xFFFFFFFF


def test_group_ids(arch):
    w = lambda name: wide(arch, name)       # noqa: E731
    results, buf, _ = run_script(arch, [
        (w("setresgid"), 10, 20, 30),
        (w("getresgid"), "BUF", "BUF+4", "BUF+8"),
        (w("setregid"), 30, NO_ID),                  # a real gid given: saved = effective (20)
        (w("setregid"), 20, NO_ID),
        (w("setresuid"), 1, 1, 1),                   # CAP_SETGID goes with uid 0
        (w("setregid"), 7, NO_ID),                   # now only its own ids
        (w("setgid"), 30),                           # 30 is no longer any of them
        (w("setgid"), 20),
        (w("getegid"),), (w("getgid"),),
        (w("setfsgid"), 99),                         # refused: answers the old fsgid
        (w("getresgid"), "BUF+12", "BUF+16", "BUF+20"),
    ])
    assert results == [0, 0, 0, 0, 0, -E.EPERM, -E.EPERM, 0, 20, 20, 20, 0]
    assert ids(buf, 12) == (20, 20, 20)
    assert ids(buf) == (10, 20, 30)


def test_capset(arch):
    """capset03: without CAP_SETPCAP, no inheritable capability outside the old inheritable
    and permitted sets; permitted never grows; effective within permitted."""
    kill, net_raw = 1 << 5, 1 << 13
    header = struct.pack("<Ii", V3, 0)

    def data(e, p, i):
        return struct.pack("<6I", e, p, i, 0, 0, 0)
    results, buf, _ = run_script(arch, [
        ("capset", "BUF", "BUF+8"),
        ("capset", "BUF", "BUF+32"),                 # inheritable beyond
        ("capset", "BUF", "BUF+56"),                 # permitted beyond
        ("capset", "BUF", "BUF+80"),                 # effective beyond permitted
        ("capset", "BUF+104", "BUF+8"),              # another pid
        ("capget", "BUF", "BUF+112"),
    ], data=header + data(kill, kill, kill) + data(kill, kill, kill | net_raw)
        + data(kill, kill | net_raw, 0) + data(kill | net_raw, kill, 0) + struct.pack("<Ii", V3, 4242))
    assert results == [0, -E.EPERM, -E.EPERM, -E.EPERM, -E.EPERM, 0]
    assert struct.unpack_from("<3I", buf, 112) == (kill, kill, kill)


def test_i386_16bit_calls():
    results, buf, _ = run_script("i386", [
        ("setresuid32", 70000, 70000, 0),
        ("getuid",), ("getuid32",),
        ("getresuid", "BUF", "BUF+2", "BUF+4"),
        ("setuid", 0xFFFF),                         # 16-bit -1: invalid
        ("setreuid", 0xFFFF, 0),                    # 16-bit -1: unchanged; euid 0 is the saved
        ("geteuid32",), ("getuid32",),
    ])
    assert results == [0, 65534, 70000, 0, -E.EINVAL, 0, 0, 70000]
    assert struct.unpack_from("<3H", buf) == (65534, 65534, 0)
