"""Thread ids of the remote protocol with the multiprocess extensions (GDB manual, "Packets":
thread-id): `p<pid>.<tid>` in hex, `-1` for all, `0` for any; without the `p` a bare tid."""

ALL, ANY = -1, 0


def format_ptid(pid: int, tid: int) -> str:
    return f"p{pid:x}.{tid:x}"


def parse_ptid(text: str) -> tuple[int, int]:
    """(pid, tid); a missing or `-1`/`0` part is ALL/ANY. ValueError on anything else."""
    if text.startswith("p"):
        pid_text, _, tid_text = text[1:].partition(".")
        return _part(pid_text), _part(tid_text) if tid_text else ALL
    return ALL, _part(text)


def _part(text: str) -> int:
    if text == "-1":
        return ALL
    return int(text, 16)
