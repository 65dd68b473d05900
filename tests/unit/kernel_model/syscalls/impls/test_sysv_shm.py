"""System V shared memory on both ABIs (ipc/shm.c): one segment attached at three addresses
is one copy of memory (bytes read into one attachment come out of another), SHM_RND and the
alignment and overlap checks, a read-only attachment (EFAULT to write into it), IPC_STAT's
size and attach count, IPC_RMID deferred to the last shmdt. i386 also through ipc(2)'s SHMAT,
which returns the address through a pointer. These were ENOSYS (LTP shmat01, shmget03...)."""
import struct

from kernel_model import errno as E

from ...call_script import BUF, run_script

IPC_PRIVATE, IPC_RMID, IPC_STAT, IPC_64 = 0, 0, 2, 0x100
SHM_RDONLY, SHM_RND = 0o10000, 0o20000
A, B, C = 0x40000000, 0x40100000, 0x40200000
O_RDONLY = 0
NATTCH = {"x86_64": ("<Q", 48, "<Q", 88), "i386": ("<I", 36, "<I", 72)}


def test_one_segment_at_three_addresses(arch):
    results, buf, _ = run_script(arch, [
        ("shmget", IPC_PRIVATE, 8192, 0o600),
        ("shmget", IPC_PRIVATE, 0, 0o600),
        ("shmat", 0, A, 0),
        ("shmat", 0, A, 0),                          # over the first: EINVAL without SHM_REMAP
        ("shmat", 0, B + 5, 0),                      # not page-aligned
        ("shmat", 0, B + 5, SHM_RND),
        ("shmat", 0, C, SHM_RDONLY),
        ("open", "/f", O_RDONLY),                    # 3
        ("pread64", 3, A, 6, 0),
        ("pipe", "BUF"),                             # 4, 5
        ("write", 5, B, 6),
        ("read", 4, "BUF+16", 6),
        ("read", 3, C, 1),                           # the read-only attachment
        ("shmctl", 0, IPC_STAT | IPC_64, "BUF+64"),
        ("shmctl", 0, IPC_RMID, 0),                  # attached: only marked
        ("shmctl", 0, IPC_STAT | IPC_64, "BUF+256"),
        ("shmdt", A), ("shmdt", A), ("shmdt", B), ("shmdt", C),
        ("shmctl", 0, IPC_STAT | IPC_64, "BUF+512"),  # gone with the last detach
    ])
    assert results == [0, -E.EINVAL, A, -E.EINVAL, -E.EINVAL, B, C, 3, 6, 0, 6, 6, -E.EFAULT, 0,
                       0, 0, 0, -E.EINVAL, 0, 0, -E.EINVAL]
    assert buf[16:22] == b"hello\n"
    size_fmt, size_at, count_fmt, count_at = NATTCH[arch]
    assert struct.unpack_from(size_fmt, buf, 64 + size_at)[0] == 8192
    assert struct.unpack_from(count_fmt, buf, 64 + count_at)[0] == 3
    mode = struct.unpack_from("<H" if arch == "i386" else "<I", buf, 256 + 20)[0]
    assert mode & 0o1000                             # SHM_DEST


def test_i386_ipc_shmat_returns_the_address_through_a_pointer():
    SHMAT, SHMDT, SHMGET = 21, 22, 23
    results, buf, _ = run_script("i386", [
        ("ipc", SHMGET, IPC_PRIVATE, 4096, 0o600),
        ("ipc", SHMAT, 0, 0, BUF + 32, A),
        ("ipc", SHMDT, 0, 0, 0, A),
        ("ipc", 99, 0, 0, 0, 0),
    ])
    assert results == [0, 0, 0, -E.ENOSYS]
    assert struct.unpack_from("<I", buf, 32)[0] == A


def test_proc_sysvipc_lists_the_objects(arch):
    """/proc/sysvipc/shm and msg: a header, then one line per object (LTP's library counts
    them: shmget03 broke on ENOENT opening it)."""
    data = b"/proc/sysvipc/shm\0/proc/sysvipc/msg\0"
    results, buf, _ = run_script(arch, [
        ("shmget", 0x4D2, 4096, 0o1640),
        ("msgget", 0x4D3, 0o1600),
        ("open", "BUF", O_RDONLY),
        ("read", 3, "BUF+64", 1000),
        ("open", "BUF+18", O_RDONLY),
        ("read", 4, "BUF+1100", 1000),
    ], data=data)
    shm = buf[64:64 + results[3]].decode().splitlines()
    msg = buf[1100:1100 + results[5]].decode().splitlines()
    assert results[:3] == [0, 0, 3] and len(shm) == 2 and len(msg) == 2
    assert shm[0].split()[:4] == ["key", "shmid", "perms", "size"]
    assert shm[1].split()[:4] == ["1234", "0", "640", "4096"]
    assert msg[1].split()[:3] == ["1235", "0", "600"]


def test_a_removed_attached_segment_keeps_its_id_not_its_key(arch):
    """IPC_RMID while attached: the id still works until the last detach, the key finds
    nothing (it became IPC_PRIVATE) and makes a new segment with IPC_CREAT."""
    results, _, _ = run_script(arch, [
        ("shmget", 0x77, 4096, 0o1600),
        ("shmat", 0, A, 0),
        ("shmctl", 0, IPC_RMID, 0),
        ("shmget", 0x77, 4096, 0o600),
        ("shmget", 0x77, 4096, 0o1600),
        ("shmctl", 0, IPC_STAT | IPC_64, "BUF"),
        ("shmdt", A),
        ("shmctl", 0, IPC_STAT | IPC_64, "BUF"),
    ])
    assert results == [0, A, 0, -E.ENOENT, 1, 0, 0, -E.EINVAL]


def test_munmap_of_a_whole_attachment_detaches_it(arch):
    """munmap of all of an attachment's pages is a detach (shm_close when its last area goes):
    nattch drops, a segment marked for removal goes, and shmdt then finds nothing (EINVAL).
    Before, the segment stayed attached to the unmapped address."""
    results, buf, _ = run_script(arch, [
        ("shmget", IPC_PRIVATE, 8192, 0o600),
        ("shmat", 0, A, 0),
        ("shmat", 0, B, 0),
        ("munmap", A, 4096),                         # half of it: still attached
        ("shmctl", 0, IPC_STAT | IPC_64, "BUF+64"),
        ("munmap", A, 8192),
        ("shmctl", 0, IPC_STAT | IPC_64, "BUF+256"),
        ("shmdt", A),
        ("shmctl", 0, IPC_RMID, 0),
        ("munmap", B, 8192),
        ("shmctl", 0, IPC_STAT | IPC_64, "BUF+512")])  # gone with its last attachment
    assert results == [0, A, B, 0, 0, 0, 0, -E.EINVAL, 0, 0, -E.EINVAL]
    _, _, count_fmt, count_at = NATTCH[arch]
    assert struct.unpack_from(count_fmt, buf, 64 + count_at)[0] == 2
    assert struct.unpack_from(count_fmt, buf, 256 + count_at)[0] == 1


SHM_INFO = 14
SHM_INFO_LAYOUT = {"x86_64": "<i4xQQ", "i386": "<iII"}    # used_ids, shm_tot, shm_rss


def test_shm_info_counts_resident_pages_of_attached_segments_only(arch):
    """SHM_INFO's shm_rss is the pages segments hold in memory (ipc/shm.c shm_get_stat): a
    segment never attached has none yet, as /proc/sysvipc/shm's rss column says (LTP shmctl04
    compares the two; shm_rss counted every segment before)."""
    results, buf, _ = run_script(arch, [
        ("shmget", IPC_PRIVATE, 8192, 0o600),
        ("shmget", IPC_PRIVATE, 2048, 0o600),
        ("shmctl", 0, SHM_INFO | IPC_64, "BUF"),      # as glibc passes it
        ("shmat", 0, A, 0),
        ("shmctl", 0, SHM_INFO | IPC_64, "BUF+64"),
    ])
    assert results == [0, 1, 1, A, 1]
    assert struct.unpack_from(SHM_INFO_LAYOUT[arch], buf, 0) == (2, 3, 0)
    assert struct.unpack_from(SHM_INFO_LAYOUT[arch], buf, 64) == (2, 3, 2)


def test_a_huge_page_segment_is_einval(arch):
    """newseg with SHM_HUGETLB: the model has no huge page size (hstate_sizelog() is NULL, as
    without CONFIG_HUGETLBFS), so EINVAL after the size checks (LTP shmget02 expected it; the
    flag was dropped and the segment made). An existing key's segment is found as before."""
    SHM_HUGETLB, IPC_CREAT = 0o4000, 0o1000
    results, _, _ = run_script(arch, [
        ("shmget", 0x51, 4096, IPC_CREAT | SHM_HUGETLB | 0o600),
        ("shmget", 0x51, 0, IPC_CREAT | SHM_HUGETLB | 0o600),         # the size first
        ("shmget", 0x51, 4096, IPC_CREAT | 0o600),
        ("shmget", 0x51, 4096, SHM_HUGETLB | 0o600)])
    assert results == [-E.EINVAL, -E.EINVAL, 0, 0]
