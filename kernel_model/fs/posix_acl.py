"""POSIX ACLs as the system.posix_acl_access and system.posix_acl_default attributes carry them
(include/uapi/linux/posix_acl_xattr.h, fs/posix_acl.c).

The attribute's value is a header, a little-endian u32 version (2), then 8-byte entries
{u16 tag, u16 perm, u32 id}. posix_acl_from_xattr reads it: shorter than the header, or a
length that is not the header plus whole entries, is EINVAL; another version EOPNOTSUPP; a
header alone is no ACL at all (NULL: setting it removes the ACL); an unknown tag, or a named
user or group whose id the caller's namespace does not map (-1 in the initial one), EINVAL.
posix_acl_valid then wants the entries in their order: one USER_OBJ, the named USERs, one
GROUP_OBJ, the named GROUPs, a MASK (needed when there are named entries), one OTHER; and no
permission bit beyond rwx (EINVAL). posix_acl_to_xattr writes it back with the id of the
entries that name nobody as ACL_UNDEFINED_ID.

An ACL is kept as a tuple of (tag, perm, id) entries. posix_acl_equiv_mode gives the mode bits
an access ACL stands for (the mask standing in for the group's), and whether the ACL says more
than they do; __posix_acl_chmod writes a chmod's bits back into the ACL; posix_acl_permission
says whom an access ACL lets in (fs/namei.c acl_permission_check asks it for every caller but
the owner while the mode has group bits; permission.py).
"""
import struct

from .. import errno as E
from ..errno import GuestErrno

ACCESS = b"system.posix_acl_access"
DEFAULT = b"system.posix_acl_default"
NAMES = (ACCESS, DEFAULT)

ACL_USER_OBJ, ACL_USER, ACL_GROUP_OBJ, ACL_GROUP, ACL_MASK, ACL_OTHER = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
ACL_RWX = 0o7
ACL_UNDEFINED_ID = 0xFFFFFFFF
VERSION = 2
HEADER, ENTRY = struct.Struct("<I"), struct.Struct("<HHI")
NAMED = (ACL_USER, ACL_GROUP)


def from_xattr(value: bytes) -> tuple | None:
    """posix_acl_from_xattr (make_posix_acl): the entries, or None for a header alone."""
    if len(value) < HEADER.size:
        raise GuestErrno(E.EINVAL)
    if HEADER.unpack_from(value)[0] != VERSION:
        raise GuestErrno(E.EOPNOTSUPP)
    count, rest = divmod(len(value) - HEADER.size, ENTRY.size)
    if rest:
        raise GuestErrno(E.EINVAL)
    entries = tuple(ENTRY.unpack_from(value, HEADER.size + i * ENTRY.size) for i in range(count))
    for tag, _perm, ident in entries:
        if tag not in (ACL_USER_OBJ, ACL_USER, ACL_GROUP_OBJ, ACL_GROUP, ACL_MASK, ACL_OTHER):
            raise GuestErrno(E.EINVAL)
        if tag in NAMED and ident == ACL_UNDEFINED_ID:
            raise GuestErrno(E.EINVAL)          # make_kuid/make_kgid: no such id
    return tuple((tag, perm, ident if tag in NAMED else ACL_UNDEFINED_ID)
                 for tag, perm, ident in entries) or None


# posix_acl_valid's walk: the states in their order, and what each tag moves to.
_NEXT = {ACL_USER_OBJ: (ACL_USER_OBJ, ACL_USER), ACL_GROUP_OBJ: (ACL_USER, ACL_GROUP),
         ACL_MASK: (ACL_GROUP, ACL_OTHER)}


def check_valid(entries: tuple) -> None:
    """posix_acl_valid: EINVAL for entries out of order, repeated, or with bits beyond rwx."""
    state, needs_mask = ACL_USER_OBJ, False
    for tag, perm, _ident in entries:
        if perm & ~ACL_RWX:
            raise GuestErrno(E.EINVAL)
        if tag in _NEXT and state == _NEXT[tag][0]:
            state = _NEXT[tag][1]
        elif tag in NAMED and state == tag:
            needs_mask = True
        elif tag == ACL_OTHER and (state == ACL_OTHER or state == ACL_GROUP and not needs_mask):
            state = 0
        else:
            raise GuestErrno(E.EINVAL)
    if state != 0:
        raise GuestErrno(E.EINVAL)


def to_xattr(entries: tuple) -> bytes:
    """posix_acl_to_xattr: the header and each entry."""
    return HEADER.pack(VERSION) + b"".join(ENTRY.pack(*entry) for entry in entries)


def equiv_mode(entries: tuple, mode: int) -> tuple[int, bool]:
    """posix_acl_equiv_mode: `mode` with its rwx bits from the ACL, and whether the ACL says
    more than those bits (a mask or a named entry)."""
    bits, more = 0, False
    for tag, perm, _ident in entries:
        perm &= ACL_RWX
        if tag == ACL_USER_OBJ:
            bits |= perm << 6
        elif tag == ACL_GROUP_OBJ:
            bits |= perm << 3
        elif tag == ACL_OTHER:
            bits |= perm
        elif tag == ACL_MASK:
            bits, more = (bits & ~0o70) | perm << 3, True
        else:
            more = True
    return (mode & ~0o777) | bits, more


def chmod_entries(entries: tuple, mode: int) -> tuple:
    """__posix_acl_chmod (posix_acl_chmod_masq): the owner's and others' bits from the mode,
    the group's into the mask if there is one, else into GROUP_OBJ."""
    has_mask = any(tag == ACL_MASK for tag, _perm, _ident in entries)
    group_tag = ACL_MASK if has_mask else ACL_GROUP_OBJ
    new = {ACL_USER_OBJ: (mode >> 6) & ACL_RWX, group_tag: (mode >> 3) & ACL_RWX,
           ACL_OTHER: mode & ACL_RWX}
    return tuple((tag, new.get(tag, perm), ident) for tag, perm, ident in entries)


def permission(entries: tuple, access, st, want: int) -> bool:
    """posix_acl_permission for a caller that does not own the file: a named user entry
    that is its file-system uid decides, limited by the mask; else each group entry it is in
    (the file's group for GROUP_OBJ), the first granting all of `want`, limited by the mask;
    OTHER when no group entry named it, nothing when one did."""
    want &= ACL_RWX
    found = False
    for i, (tag, perm, ident) in enumerate(entries):
        if tag == ACL_USER and ident == access.creds.fsuid:
            return perm & _mask_after(entries, i) & want == want
        if tag in (ACL_GROUP_OBJ, ACL_GROUP) and access.in_group(
                st.gid if tag == ACL_GROUP_OBJ else ident):
            found = True
            if perm & want == want:
                return perm & _mask_after(entries, i) & want == want
        if tag == ACL_OTHER:
            return not found and perm & want == want
    return False


def _mask_after(entries: tuple, index: int) -> int:
    """The MASK entry's bits, which follows the named and group entries (all bits if none)."""
    return next((perm for tag, perm, _ident in entries[index + 1:] if tag == ACL_MASK), ACL_RWX)
