"""The user and group ids: get*id, set*id, setres*id, setfs*id (kernel/sys.c, kernel/uid16.c).

Each call changes the process's Credentials (process/creds.py) by kernel/sys.c's rules: with
CAP_SETUID (CAP_SETGID for groups) any id may be set; without it only to one the process
already has (the real, effective or saved one, as each call allows), else EPERM. (uid_t)-1
leaves an id unchanged; as setuid's or setfsuid's argument it is invalid.

i386's calls without the "32" suffix are the 16-bit ones of kernel/uid16.c: their results
above 65535 read as the overflow id (high2lowuid) and a 16-bit -1 (0xFFFF) means -1
(low2highuid). x86-64's are 32-bit under the same names.

Ids are read and given in the caller's user namespace (user_namespace.py): an id it does not
map reads as the overflow id, and setting one is EINVAL (setfsuid's answer is the old id);
the capabilities asked are the caller's there (ns_capable_setid).
"""
from ... import errno as E
from ...errno import GuestErrno
from ...creds import CAP_SETGID, CAP_SETUID, NO_ID
from ...user_namespace import make_kid, munged
from ..kinds import K
from ..registry import syscall

OVERFLOW_ID = 65534                  # /proc/sys/kernel/overflowuid and overflowgid


def _is_16bit(ctx, name: str) -> bool:
    return ctx.abi == "i386" and not name.endswith("32")


def _map_name(name: str) -> str:
    return "gid_map" if "gid" in name or "groups" in name else "uid_map"


def _to_guest(ctx, name: str, value: int) -> int:
    """from_kuid_munged, then high2lowuid for the 16-bit calls."""
    value = munged(ctx.proc.creds.user_ns, value, _map_name(name))
    return value if not _is_16bit(ctx, name) or value <= 0xFFFF else OVERFLOW_ID


def _from_guest(ctx, name: str, value: int) -> int:
    """An id argument as the kernel sees it: 32 bits, low2highuid for the 16-bit calls, then
    make_kuid (an unmapped id: EINVAL; setfsuid's: -1, which changes nothing)."""
    if _is_16bit(ctx, name):
        value &= 0xFFFF
        value = NO_ID if value == 0xFFFF else value
    else:
        value &= 0xFFFFFFFF
    if value == NO_ID:
        return value
    kid = make_kid(ctx.proc.creds.user_ns, value, _map_name(name))
    if kid is None:
        if name.startswith("setfs"):
            return NO_ID
        raise GuestErrno(E.EINVAL)
    return kid


def _family(kind: str):
    """The names of one id family's fields: (real, effective, saved, fs, capability)."""
    if kind == "u":
        return "uid", "euid", "suid", "fsuid", CAP_SETUID
    return "gid", "egid", "sgid", "fsgid", CAP_SETGID


# --- reading ------------------------------------------------------------------------------
def _getter(name: str, field: str):
    @syscall(name, args=())
    def get(ctx):
        return _to_guest(ctx, name, getattr(ctx.proc.creds, field))
    return get


for _name, _field in (("getuid", "uid"), ("geteuid", "euid"), ("getgid", "gid"),
                      ("getegid", "egid")):
    _getter(_name, _field)
    _getter(_name + "32", _field)


def _getres(name: str, kind: str):
    @syscall(name, args=(("ruid", K.PTR), ("euid", K.PTR), ("suid", K.PTR)))
    def getres(ctx, r, e, s):
        creds = ctx.proc.creds
        width = 2 if _is_16bit(ctx, name) else 4
        for pointer, field in zip((r, e, s), _family(kind)[:3]):
            value = _to_guest(ctx, name, getattr(creds, field))
            ctx.write(pointer, value.to_bytes(width, "little"))
        return 0
    return getres


for _kind in "ug":
    _getres(f"getres{_kind}id", _kind)
    _getres(f"getres{_kind}id32", _kind)


# --- setting ------------------------------------------------------------------------------
def setid(ctx, kind: str, value: int) -> None:
    """setuid/setgid: with the capability, every id; else the effective and fs ones to the
    real or saved one."""
    real, effective, saved, fs, cap = _family(kind)
    creds = ctx.proc.creds
    if value == NO_ID:
        raise GuestErrno(E.EINVAL)
    if creds.capable_here(cap):
        ctx.proc.creds = creds.with_ids(**{real: value, effective: value, saved: value, fs: value})
    elif value in (getattr(creds, real), getattr(creds, saved)):
        ctx.proc.creds = creds.with_ids(**{effective: value, fs: value})
    else:
        raise GuestErrno(E.EPERM)


def setreid(ctx, kind: str, r: int, e: int) -> None:
    """setreuid/setregid: the real id to the real or effective one, the effective to any of
    the three; the saved one follows the effective when the real one is set or the effective
    one becomes other than the old real one."""
    real, effective, saved, fs, cap = _family(kind)
    old = ctx.proc.creds
    privileged = old.capable_here(cap)
    ids = {}
    if r != NO_ID:
        if not privileged and r not in (getattr(old, real), getattr(old, effective)):
            raise GuestErrno(E.EPERM)
        ids[real] = r
    if e != NO_ID:
        if not privileged and e not in (getattr(old, real), getattr(old, effective),
                                        getattr(old, saved)):
            raise GuestErrno(E.EPERM)
        ids[effective] = e
    new_effective = ids.get(effective, getattr(old, effective))
    if r != NO_ID or (e != NO_ID and e != getattr(old, real)):
        ids[saved] = new_effective
    ids[fs] = new_effective
    ctx.proc.creds = old.with_ids(**ids)


def setresid(ctx, kind: str, r: int, e: int, s: int) -> None:
    """setresuid/setresgid: each id given, to one of the three current ones unless capable."""
    real, effective, saved, fs, cap = _family(kind)
    old = ctx.proc.creds
    current = (getattr(old, real), getattr(old, effective), getattr(old, saved))
    wanted = {field: value for field, value in zip((real, effective, saved), (r, e, s))
              if value != NO_ID}
    if not old.capable_here(cap) and any(value not in current for value in wanted.values()):
        raise GuestErrno(E.EPERM)
    wanted[fs] = wanted.get(effective, getattr(old, effective))
    ctx.proc.creds = old.with_ids(**wanted)


def setfsid(ctx, kind: str, value: int) -> int:
    """setfsuid/setfsgid: always the old fs id; changed only to one of the process's ids (or
    any, with the capability), never to -1."""
    real, effective, saved, fs, cap = _family(kind)
    old = ctx.proc.creds
    previous = getattr(old, fs)
    if value != NO_ID and (value in (getattr(old, real), getattr(old, effective),
                                     getattr(old, saved), previous) or old.capable_here(cap)):
        if value != previous:
            ctx.proc.creds = old.with_ids(**{fs: value})
    return previous


def _register(name: str, kind: str, call, nargs: int):
    names = ("r", "e", "s")[:nargs] if nargs > 1 else ("id",)
    args = tuple((f"{n}{kind}id" if nargs > 1 else f"{kind}id", K.INT) for n in names)
    if nargs == 1:
        @syscall(name, args=args)
        def one(ctx, value):
            result = call(ctx, kind, _from_guest(ctx, name, value))
            return 0 if result is None else _to_guest(ctx, name, result)
    elif nargs == 2:
        @syscall(name, args=args)
        def two(ctx, r, e):
            call(ctx, kind, _from_guest(ctx, name, r), _from_guest(ctx, name, e))
            return 0
    else:
        @syscall(name, args=args)
        def three(ctx, r, e, s):
            call(ctx, kind, *(_from_guest(ctx, name, v) for v in (r, e, s)))
            return 0


for _kind in "ug":
    for _base, _call, _nargs in (("set%sid", setid, 1), ("setre%sid", setreid, 2),
                                 ("setres%sid", setresid, 3), ("setfs%sid", setfsid, 1)):
        _register(_base % _kind, _kind, _call, _nargs)
        _register(_base % _kind + "32", _kind, _call, _nargs)
