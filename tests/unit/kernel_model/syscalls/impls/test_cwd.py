"""getcwd of a removed directory is ENOENT (fs/d_path.c: d_unlinked), from guest programs on
both ABIs (a renamed cwd: test_stale_handles.py)."""
from kernel_model import errno as E

from ...syscall_steps import run_script


def test_getcwd_of_a_removed_directory_is_enoent(tmp_path, arch):
    root = tmp_path / "root"
    root.mkdir()
    results, buf, _ = run_script(root, arch, [
        ("mkdir", b"/d", 0o755),
        ("chdir", b"/d"),
        ("getcwd", "BUF", 256),
        ("rmdir", b"/d"),
        ("getcwd", "BUF2", 256),
        ("open", b"x", 0o101, 0o644),          # O_CREAT|O_WRONLY in a removed cwd: ENOENT
    ])
    assert results == [0, 0, 3, 0, -E.ENOENT, -E.ENOENT]
    assert buf.startswith(b"/d\0")
