"""The first program by name (kernel_model/path_search.py): looked up in the guest's PATH in
the guest's view of the file system, as glibc's execvp does (issue 26: `trapline run -- ls`
said 'cannot run CWD/ls')."""
import os
import shutil
from pathlib import Path

import pytest

from kernel_model import errno as E
from kernel_model.errno import GuestErrno
from kernel_model.errors import ExecFailed
from kernel_model.path_search import DEFAULT_PATH, candidates, load_from_path, search_path
from trapline.sandbox import Sandbox

SAMPLES = Path(__file__).resolve().parents[3] / "samples" / "bin"


def test_candidates_are_each_element_then_the_name_and_an_empty_element_is_the_cwd():
    assert candidates(b"ls", b"/usr/bin:/bin") == [b"/usr/bin/ls", b"/bin/ls"]
    assert candidates(b"ls", b":/bin:") == [b"ls", b"/bin/ls", b"ls"]


def test_no_path_in_the_environment_is_glibcs_default():
    assert search_path([b"HOME=/", b"PATH=/opt/bin"]) == b"/opt/bin"
    assert search_path([b"HOME=/"]) == DEFAULT_PATH == b"/bin:/usr/bin"


def _loader(errors: dict[bytes, int]):
    tried = []

    def load(candidate):
        tried.append(candidate)
        if candidate in errors:
            raise GuestErrno(errors[candidate])
        return "program"
    return load, tried


def test_the_search_goes_past_missing_and_unexecutable_candidates():
    load, tried = _loader({b"/a/x": E.ENOENT, b"/b/x": E.EACCES, b"/c/x": E.ENOTDIR})
    assert load_from_path(load, b"x", b"/a:/b:/c:/d:/e") == (b"/d/x", "program")
    assert tried == [b"/a/x", b"/b/x", b"/c/x", b"/d/x"]


def test_any_other_error_ends_the_search_with_it():
    load, tried = _loader({b"/a/x": E.ENOEXEC})
    with pytest.raises(GuestErrno) as failed:
        load_from_path(load, b"x", b"/a:/b")
    assert failed.value.errno == E.ENOEXEC and tried == [b"/a/x"]


@pytest.mark.parametrize("errors,errno", [({b"/a/x": E.ENOENT, b"/b/x": E.ENOENT}, E.ENOENT),
                                          ({b"/a/x": E.EACCES, b"/b/x": E.ENOENT}, E.EACCES)])
def test_nothing_found_is_enoent_or_eacces_if_a_candidate_was_denied(errors, errno):
    load, _ = _loader(errors)
    with pytest.raises(GuestErrno) as failed:
        load_from_path(load, b"x", b"/a:/b")
    assert failed.value.errno == errno


@pytest.fixture
def rootfs(tmp_path, arch) -> Path:
    """/bin/args_env, a folder /opt/args_env that is no program, /work/args_env in the cwd only."""
    root = tmp_path / "root"
    for folder in ("bin", "opt/args_env", "work"):
        (root / folder).mkdir(parents=True)
    shutil.copy(SAMPLES / arch / "args_env", root / "bin" / "args_env")
    shutil.copy(SAMPLES / arch / "args_env", root / "work" / "here")
    os.chmod(root / "work" / "here", 0o755)
    return root


def _run(rootfs, *argv, **options):
    return Sandbox(rootfs=str(rootfs), cwd="/work", clear_env=True, **options).run(list(argv))


def test_a_name_runs_the_program_found_in_the_guests_path_with_argv0_as_given(rootfs):
    result = _run(rootfs, "args_env", "x", env={"PATH": "/nothing:/opt:/bin"})
    assert result.exit_code == 0
    assert result.stdout.splitlines()[:3] == [b"argc=2", b"argv[0]=args_env", b"argv[1]=x"]


def test_without_path_the_default_search_path_is_used(rootfs):
    assert _run(rootfs, "args_env").stdout.startswith(b"argc=1\nargv[0]=args_env\n")


def test_the_cwd_is_searched_only_for_an_empty_element_and_a_slash_is_a_path(rootfs):
    with pytest.raises(ExecFailed) as failed:
        _run(rootfs, "here", env={"PATH": "/bin"})
    assert failed.value.errno == E.ENOENT
    assert str(failed.value) == "cannot run here: ENOENT (not found in PATH /bin)"
    assert _run(rootfs, "here", env={"PATH": "/bin:"}).exit_code == 0
    assert _run(rootfs, "./here", env={"PATH": "/bin"}).exit_code == 0


def test_a_name_found_nowhere_executable_is_eacces(rootfs):
    with pytest.raises(ExecFailed) as failed:
        _run(rootfs, "args_env", env={"PATH": "/opt"})
    assert failed.value.errno == E.EACCES
