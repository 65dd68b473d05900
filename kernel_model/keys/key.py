"""One key (security/keys/internal.h struct key): a serial number, a type, a description, an
owner, a permission mask, and its payload (a keyring's payload is the keys it links).

The permission mask has four bytes (include/uapi/linux/keyctl.h): the possessor's, the owner's,
the group's and the others', each of the six rights VIEW, READ, WRITE, SEARCH, LINK, SETATTR.
"""
from dataclasses import dataclass, field

VIEW, READ, WRITE, SEARCH, LINK, SETATTR = 0x01, 0x02, 0x04, 0x08, 0x10, 0x20
ALL = 0x3F
POS_SHIFT, USR_SHIFT, GRP_SHIFT = 24, 16, 8
PERM_MASK = ALL << POS_SHIFT | ALL << USR_SHIFT | ALL << GRP_SHIFT | ALL


@dataclass
class Key:
    serial: int
    type: str
    description: bytes
    uid: int
    gid: int
    perm: int
    payload: bytes = b""
    links: list[int] = field(default_factory=list)     # a keyring's keys, oldest first
    revoked: bool = False
    expiry_ns: int | None = None                       # KEYCTL_SET_TIMEOUT, on CLOCK_REALTIME
    negative_errno: int = 0         # a negatively instantiated key's error (key->state < 0)

    @property
    def is_keyring(self) -> bool:
        return self.type == "keyring"

    def rights(self, fsuid: int, in_group, possessed: bool) -> int:
        """key_task_permission(): the owner's, the group's or the others' byte (the first that
        applies), with the possessor's added when the caller possesses the key."""
        if self.uid == fsuid:
            rights = self.perm >> USR_SHIFT
        elif in_group(self.gid):
            rights = self.perm >> GRP_SHIFT
        else:
            rights = self.perm
        if possessed:
            rights |= self.perm >> POS_SHIFT
        return rights & ALL

    def describe(self) -> bytes:
        """KEYCTL_DESCRIBE's "type;uid;gid;perm;description" (keyctl_describe_key)."""
        return b"%s;%d;%d;%08x;%s" % (self.type.encode(), self.uid, self.gid, self.perm,
                                      self.description)
