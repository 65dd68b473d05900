"""A new inode's mode and ACLs under a directory's default ACL (fs/posix_acl.c posix_acl_create,
which ext4_init_acl and tmpfs's simple_acl_create call for every inode a create, mkdir, mknod
or O_TMPFILE makes; a symlink takes none).

A directory with no default ACL, or on a file system without ACLs, leaves the mode to the
umask (posix_acl_create's `*mode &= ~current_umask()`; mode_strip_umask for the others).
Under a default ACL the umask does not apply: the new inode's access ACL is the default one
masked by the mode asked for, and the mode's rwx bits the ACL's (posix_acl_create_masq: the
owner's and others' entries and the mode's bits cut each other; the mask entry, or the owning
group's when there is none, does with the group bits; named entries are kept as they are).
The access ACL is kept only when it says more than the mode (a named entry or a mask); a new
directory also gets the default ACL as its own default. ext4 writes the default before the
access ACL (ext4_init_acl), as listxattr's order shows.
"""
from .posix_acl import (ACCESS, ACL_GROUP_OBJ, ACL_MASK, ACL_OTHER, ACL_RWX, ACL_USER_OBJ,
                        DEFAULT)


def parent_default(parent) -> tuple | None:
    """get_inode_acl(dir, ACL_TYPE_DEFAULT): None without one or without ACLs (IS_POSIXACL)."""
    store = getattr(parent, "xattrs", None)
    if store is None or not store.keeps_acls:
        return None
    return store.acl(DEFAULT)


def create_masq(entries: tuple, mode: int) -> tuple[tuple, int, bool]:
    """posix_acl_create_masq: the ACL and the mode (its rwx bits) cut by each other, and
    whether the ACL says more than the mode (a mask or a named entry)."""
    bits, out, more = mode & 0o777, [], False
    group_tag = ACL_MASK if any(tag == ACL_MASK for tag, _p, _i in entries) else ACL_GROUP_OBJ
    for tag, perm, ident in entries:
        if tag == ACL_USER_OBJ:
            perm &= bits >> 6
            bits &= perm << 6 | ~0o700
        elif tag == ACL_OTHER:
            perm &= bits & ACL_RWX
            bits &= perm | ~ACL_RWX
        elif tag == group_tag:
            perm &= bits >> 3 & ACL_RWX
            bits &= perm << 3 | ~0o070
        more = more or tag not in (ACL_USER_OBJ, ACL_GROUP_OBJ, ACL_OTHER)
        out.append((tag, perm, ident))
    return tuple(out), mode & ~0o777 | bits & 0o777, more


def creation_mode(parent, mode: int | None, umask: int, is_dir: bool) -> tuple[int | None, tuple]:
    """The new inode's mode, and the ACLs to give it ((name, entries) pairs, in ext4's order);
    a symlink asks no mode (None) and takes no ACL."""
    if mode is None:
        return None, ()
    default = parent_default(parent)
    if default is None:
        return mode & ~umask, ()
    access, mode, more = create_masq(default, mode)
    acls = ((DEFAULT, default),) if is_dir else ()
    return mode, acls + ((ACCESS, access),) if more else acls


def give_acls(node, acls: tuple) -> None:
    """Store what creation_mode chose on the new inode (the same file system's store)."""
    store = getattr(node, "xattrs", None) if acls else None
    if store is None or not store.keeps_acls:
        return
    for name, entries in acls:
        store.set_acl(name, entries)
