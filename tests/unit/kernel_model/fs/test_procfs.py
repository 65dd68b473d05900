"""/proc: the calling process's view, and fixed machine files."""
from kernel_model import errno as E
from kernel_model.fs import CapturedOutput, O_DIRECTORY, O_RDONLY, O_WRONLY, S_IFLNK, S_IFMT

from .helpers import FakeProcess, PROC, errno_of, names, read_file


def test_self_is_a_symlink_to_the_pid(fs):
    assert fs.readlink(b"/proc/self", b"/", PROC) == b"42"
    assert fs.realpath(b"/proc/self/maps", b"/", PROC) == b"/proc/42/maps"


def test_exe_is_the_executable_in_the_guest(fs):
    assert fs.readlink(b"/proc/self/exe", b"/", PROC) == b"/bin/prog"
    assert read_file(fs, b"/proc/self/exe") == b"\x7fELF-prog"
    assert fs.realpath(b"/proc/42/exe", b"/", PROC) == b"/bin/prog"


def test_fd_directory_lists_links_in_fd_order(fs):
    proc = FakeProcess(fds={10: b"/etc/passwd", 2: b"pipe:[3]", 0: b"/dev/null"})
    f = fs.open(b"/proc/self/fd", O_RDONLY | O_DIRECTORY, 0, b"/", proc)
    assert [e.name for e in f.getdents()] == [b".", b"..", b"0", b"2", b"10"]
    assert fs.stat(b"/proc/self/fd/10", b"/", proc, follow=False).mode & S_IFMT == S_IFLNK
    assert fs.readlink(b"/proc/self/fd/2", b"/", proc) == b"pipe:[3]"
    assert read_file_as(fs, b"/proc/self/fd/10", proc).startswith(b"root:")
    assert errno_of(fs.stat, b"/proc/self/fd/2", b"/", proc) == E.ENOENT   # a pipe is no path
    assert errno_of(fs.stat, b"/proc/self/fd/3", b"/", proc) == E.ENOENT


def read_file_as(fs, path, proc):
    return fs.open(path, O_RDONLY, 0, b"/", proc).read(1000)


def test_cwd_maps_stat_status(fs):
    proc = FakeProcess(pid=7, directory=b"/etc")
    assert fs.readlink(b"/proc/self/cwd", b"/", proc) == b"/etc"
    assert fs.realpath(b"/proc/self/cwd/passwd", b"/", proc) == b"/etc/passwd"
    assert read_file_as(fs, b"/proc/self/maps", proc) == proc.maps
    stat = read_file_as(fs, b"/proc/7/stat", proc)
    assert stat.startswith(b"7 (prog) R ") and len(stat.split()) == 52
    status = read_file_as(fs, b"/proc/self/status", proc)
    assert b"Name:\tprog\n" in status and b"Pid:\t7\n" in status


def test_other_pids_do_not_exist(fs):
    assert errno_of(fs.stat, b"/proc/1", b"/", PROC) == E.ENOENT
    assert names(fs, b"/proc") == [b".", b"..", b"42", b"cpuinfo", b"filesystems",
                                      b"mounts", b"self", b"sys", b"uptime"]


def test_ngroups_max(fs):
    """Read by sysconf(_SC_NGROUPS_MAX) (coreutils' id/groups): NGROUPS_MAX."""
    assert read_file(fs, b"/proc/sys/kernel/ngroups_max") == b"65536\n"


def test_filesystems_lists_the_registered_types(fs):
    """Read by libselinux in every dynamic coreutils program: the reference host's 364 bytes,
    each type with "nodev" when it needs no device, and no selinuxfs."""
    text = read_file(fs, b"/proc/filesystems")
    assert len(text) == 364
    assert text.startswith(b"nodev\tsysfs\nnodev\ttmpfs\nnodev\tproc\n")
    assert b"\text4\n" in text and b"nodev\toverlay\n" in text and b"selinuxfs" not in text


def test_proc_stats_in_one_kib_blocks_and_its_directories_have_no_size(fs):
    """proc_fill_super's 1 KiB block size: glibc's stdio reads /proc files in st_blksize
    pieces (libselinux's read of /proc/filesystems is read(3, ..., 1024) natively)."""
    for path in (b"/proc/filesystems", b"/proc/self/status", b"/proc", b"/proc/self"):
        st = fs.stat(path, b"/", PROC)
        assert (st.blksize, st.size, st.blocks) == (1024, 0, 0), path


def test_cpuinfo_is_fixed(fs):
    """(meminfo is the kernel's: tests/e2e/run/test_machine_stats.py)"""
    cpuinfo = read_file(fs, b"/proc/cpuinfo")
    assert b"processor\t: 0\n" in cpuinfo and b"flags\t\t: fpu" in cpuinfo
    assert fs.stat(b"/proc/cpuinfo", b"/", PROC).size == 0     # like any seq_file


def test_proc_is_read_only(fs):
    assert errno_of(fs.open, b"/proc/cpuinfo", O_WRONLY, 0, b"/", PROC) == E.EACCES
    assert errno_of(fs.open, b"/proc/new", O_WRONLY | 0o100, 0o644, b"/", PROC) == E.EACCES
    assert errno_of(fs.mkdir, b"/proc/x", 0o755, b"/", PROC) == E.EPERM
    assert errno_of(fs.chmod, b"/proc/cpuinfo", 0o777, b"/", PROC) == E.EPERM


def test_proc_inodes_are_stable(fs):
    first = fs.stat(b"/proc/self/maps", b"/", PROC).ino
    assert fs.stat(b"/proc/42/maps", b"/", PROC).ino == first
    assert fs.stat(b"/proc", b"/", PROC).ino == 1


class ProcessWithFiles(FakeProcess):
    """A ProcessView that also offers the optional fd_file(fd)."""

    def __init__(self, files: dict):
        super().__init__(fds={fd: f.path for fd, f in files.items()})
        self.files = files

    def fd_file(self, fd: int):
        return self.files[fd]


def test_dev_stdout_on_a_pipe_reaches_the_open_file(fs):
    out = CapturedOutput(name=b"pipe:[9]")
    proc = ProcessWithFiles({1: out})
    assert fs.open(b"/dev/stdout", O_WRONLY, 0, b"/", proc) is out
    assert fs.open(b"/proc/self/fd/1", O_WRONLY, 0, b"/", proc).write(b"hi") == 2
    assert out.data == b"hi"
    assert fs.stat(b"/dev/stdout", b"/", proc) == out.stat()
    assert fs.readlink(b"/proc/self/fd/1", b"/", proc) == b"pipe:[9]"
    assert errno_of(fs.open, b"/dev/stdout", O_WRONLY, 0, b"/", PROC) == E.ENOENT  # no fd_file


def test_proc_sys_values(fs):
    """/proc/sys: the modeled defaults LTP's library reads (pid_max, the pipe limits) and the
    values a kernel adds, read when the file is opened."""
    assert read_file(fs, b"/proc/sys/kernel/pid_max") == b"32768\n"
    assert read_file(fs, b"/proc/sys/fs/pipe-max-size") == b"1048576\n"
    assert read_file(fs, b"/proc/sys/fs/pipe-user-pages-soft") == b"16384\n"
    assert read_file(fs, b"/proc/sys/kernel/tainted") == b"0\n"          # LTP wait403
    assert read_file(fs, b"/proc/sys/kernel/core_pattern") == b"core\n"  # LTP waitid10
    name = [b"box"]
    fs.add_sysctl(b"kernel/hostname", lambda: name[0])
    assert read_file(fs, b"/proc/sys/kernel/hostname") == b"box\n"
    name[0] = b"other"
    assert read_file(fs, b"/proc/sys/kernel/hostname") == b"other\n"
    assert b"hostname" in names(fs, b"/proc/sys/kernel")
    assert errno_of(fs.open, b"/proc/sys/kernel/pid_max", O_WRONLY, 0, b"/", PROC) == E.EACCES


def test_a_tunable_sysctl_is_root_writable_and_stores_each_write(fs):
    """A sysctl the kernel adds with a writer (vm.max_map_count: memory/map_count.py) is mode
    0644; an open for writing with O_TRUNC changes nothing, and each write is handed over."""
    from kernel_model.fs import O_TRUNC

    def write(position, data):
        value[0] = data.strip()
        return len(data)
    value = [b"7"]
    fs.add_sysctl(b"vm/tunable", lambda: value[0], write)
    f = fs.open(b"/proc/sys/vm/tunable", O_WRONLY | O_TRUNC, 0, b"/", PROC)
    assert read_file(fs, b"/proc/sys/vm/tunable") == b"7\n"
    assert f.write(b"9\n") == 2
    f.close()
    assert read_file(fs, b"/proc/sys/vm/tunable") == b"9\n"
    assert f.node.stat().mode & 0o777 == 0o644


def test_other_processes_show_with_their_state(fs):
    """Once the kernel lists its processes, /proc/PID is every one's (LTP reads a child's
    /proc/PID/stat to see it asleep: futex_wait02, pipe2_04), with its leader thread's state,
    its process group and session; a zombie is Z."""
    from kernel_model.fdtable import FdTable
    from kernel_model.fsview import fs_view
    from kernel_model.process.proc import SLEEPING, ZOMBIE, Process, Thread

    def process(pid, state, thread_state):
        proc = Process(pid, 42, None, FdTable(), pgid=42, sid=7, exe=b"/bin/child", state=state)
        proc.threads.append(Thread(pid, proc, 0, state=thread_state))
        return proc
    others = {43: process(43, "runnable", SLEEPING), 44: process(44, ZOMBIE, ZOMBIE)}
    fs.list_processes(lambda: {pid: fs_view(p) for pid, p in others.items()})
    assert names(fs, b"/proc") == [b".", b"..", b"42", b"43", b"44", b"cpuinfo", b"filesystems",
                                      b"mounts", b"self", b"sys", b"uptime"]
    assert read_file(fs, b"/proc/43/stat").split()[:6] == [b"43", b"(child)", b"S", b"42", b"42", b"7"]
    assert b"State:\tS (sleeping)\n" in read_file(fs, b"/proc/43/status")
    assert read_file(fs, b"/proc/44/stat").split()[2] == b"Z"
    assert read_file(fs, b"/proc/self/stat").split()[2] == b"R"      # the caller runs
    assert errno_of(fs.stat, b"/proc/45", b"/", PROC) == E.ENOENT


def test_the_view_s_state_names_are_the_process_states():
    """fsview.py spells process/proc.py's state names (importing them would be a cycle)."""
    from kernel_model.fsview import STATE_NAMES
    from kernel_model.process.proc import RUNNABLE, SLEEPING, STOPPED, ZOMBIE
    assert set(STATE_NAMES) == {RUNNABLE, SLEEPING, STOPPED, ZOMBIE}


def test_a_lookup_makes_only_the_entries_on_its_path(fs):
    """busybox reads /proc/self/exe at every start: resolving it makes /proc's root, self, the
    pid's folder and exe, not the /proc/sys tree, every process's folder nor the pid's other
    entries (each /proc entry gets its inode number when it is made: procfs.table)."""
    from kernel_model.fdtable import FdTable
    from kernel_model.fsview import fs_view
    from kernel_model.process.proc import SLEEPING, Process, Thread
    others = {}
    for pid in (43, 44):
        others[pid] = Process(pid, 42, None, FdTable(), pgid=42, sid=7, exe=b"/bin/child")
        others[pid].threads.append(Thread(pid, others[pid], 0, state=SLEEPING))
    fs.list_processes(lambda: {pid: fs_view(p) for pid, p in others.items()})
    assert fs.readlink(b"/proc/self/exe", b"/", PROC) == b"/bin/prog"
    made = set(fs._procfs.table._by_key)
    assert made == {b"/", b"/self", b"/42", b"/42/exe"}
    assert b"status" in names(fs, b"/proc/self")        # a listing makes the folder's entries
    assert b"/42/status" in fs._procfs.table._by_key and b"/43" not in fs._procfs.table._by_key
