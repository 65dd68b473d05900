"""Deterministic inode numbers.

Host inode numbers are never shown to the guest: they differ between machines and copies of the
same rootfs. Instead each inode gets the next number of a counter the first time the guest sees it
(root first, then in the order of the guest's own lookups, and directory listings in the
order they list), so the same run on the same rootfs folder always sees the same numbers. A host file is
recognised by its host identity (st_dev, st_ino) so hard links keep sharing one number.
"""
from typing import Hashable


class InodeTable:
    def __init__(self, first: int = 2):
        # Linux ext4 numbers its root directory 2; tmpfs and proc start at 1.
        self._next = first
        self._by_key: dict[Hashable, int] = {}

    def fresh(self) -> int:
        number = self._next
        self._next += 1
        return number

    def for_key(self, key: Hashable) -> int:
        """The number of the inode known by `key` (a host identity, a synthetic path...)."""
        number = self._by_key.get(key)
        if number is None:
            number = self._by_key[key] = self.fresh()
        return number

    def forget_where(self, matches) -> None:
        """Forget every key `matches` accepts."""
        for key in [k for k in self._by_key if matches(k)]:
            del self._by_key[key]

    def forget(self, key: Hashable) -> None:
        """The host inode is gone: a later host inode reusing its number is a new inode."""
        self._by_key.pop(key, None)
