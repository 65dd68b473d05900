"""Escaping, exit lines, errno texts and signal names as strace prints them."""
import pytest

from kernel_model.signals import SIGNAL_NAMES, short_signal_name, signal_name
from trapline.strace.syscall_line import format_exit, format_killed
from trapline.strace.errnos import ERRNOS, format_error_return
from trapline.strace.strings import (escape_bytes, format_argv, format_buffer,
                                         format_cstring, format_envp, format_path)
from tests.unit.trapline.strace.fake_memory import FakeMemory


@pytest.mark.parametrize("data,text", [
    (b"hello, world\n", "hello, world\\n"),
    (b"\t\\\"", '\\t\\\\\\"'),
    (b"\x00", "\\0"),
    (b"\x001", "\\0001"),          # a following octal digit forces three digits
    (b"\x008", "\\08"),            # 8 is not an octal digit
    (b"\xff\x7f\x1b", "\\377\\177\\33"),
    (b"\r\v\f", "\\r\\v\\f"),
    (b"~ ", "~ "),
])
def test_escape(data, text):
    assert escape_bytes(data) == text


def test_buffers_and_strings():
    mem = FakeMemory({0x100: b"x" * 40 + b"\0", 0x200: b"ok\0"})
    assert format_buffer(mem, 0x100, 0) == '""'
    assert format_buffer(mem, 0x100, 40) == '"' + "x" * 32 + '"...'
    assert format_buffer(mem, 0x900, 4) == "0x900"
    assert format_cstring(mem, 0x100) == '"' + "x" * 32 + '"...'
    assert format_cstring(mem, 0x200) == '"ok"'
    assert format_cstring(mem, 0) == "NULL"
    assert format_path(mem, 0x100) == '"' + "x" * 40 + '"'
    assert format_path(mem, 0x900) == "0x900"


def test_argv_and_envp():
    mem = FakeMemory({0x100: b"ls\0", 0x110: b"-l\0",
                      0x200: (0x100).to_bytes(4, "little") + (0x110).to_bytes(4, "little")
                      + bytes(4),
                      0x300: (0x100).to_bytes(8, "little") + bytes(8)})
    assert format_argv(mem, 0x200, 4) == '["ls", "-l"]'
    assert format_envp(mem, 0x300, 8) == "0x300 /* 1 var */"
    assert format_argv(mem, 0x999, 8) == "0x999"


def test_exit_and_kill_lines():
    assert format_exit(0) == "+++ exited with 0 +++"
    assert format_exit(7) == "+++ exited with 7 +++"
    assert format_killed(11) == "+++ killed by SIGSEGV +++"
    assert format_killed(11, core_dumped=True) == "+++ killed by SIGSEGV (core dumped) +++"
    assert format_killed(40) == "+++ killed by SIGRT_8 +++"


@pytest.mark.parametrize("number,name", [(1, "SIGHUP"), (9, "SIGKILL"), (11, "SIGSEGV"),
                                         (17, "SIGCHLD"), (31, "SIGSYS"), (32, "SIGRTMIN"),
                                         (33, "SIGRT_1"), (34, "SIGRT_2"), (64, "SIGRT_32")])
def test_signal_names(number, name):
    assert signal_name(number) == name


def test_signal_table_and_short_names():
    assert sorted(SIGNAL_NAMES) == list(range(1, 65))
    assert (signal_name(0), signal_name(65)) == ("0", "65")
    assert short_signal_name(2) == "INT"


def test_errno_table_covers_linux_1_to_133():
    assert set(ERRNOS) == set(range(1, 134)) - {41, 58}
    assert ERRNOS[2] == ("ENOENT", "No such file or directory")
    assert ERRNOS[38] == ("ENOSYS", "Function not implemented")
    assert ERRNOS[133] == ("EHWPOISON", "Memory page has hardware error")


def test_errno_table_agrees_with_kernel_model_errno():
    from kernel_model.errno import NAMES
    for number, name in NAMES.items():
        assert ERRNOS[number][0] == name


@pytest.mark.parametrize("errno,text", [
    (2, "-1 ENOENT (No such file or directory)"),
    (13, "-1 EACCES (Permission denied)"),
    (41, "-1 ERRNO_41 (Unknown error 41)"),
    (512, "? ERESTARTSYS (To be restarted if SA_RESTART is set)"),
])
def test_error_returns(errno, text):
    assert format_error_return(errno) == text
