"""File handles (fs/fhandle.c, exportfs): an inode named by bytes instead of a path.

name_to_handle_at encodes an inode as tmpfs does (shmem_encode_fh: handle type 1, three 32-bit
words: the generation, then the 64-bit inode number; a buffer of fewer than 12 bytes is
EOVERFLOW with the size needed written back); open_by_handle_at finds the inode again on the
mount of its directory fd (another mount's: ESTALE). The model decodes the handles it encoded
in this run: the table keeps each encoded inode by (mount, inode number), with the path it was
reached by, which names the open file. An inode whose names are gone still opens, as a tmpfs
inode does while it is cached (shmem_fh_to_dentry's ilookup5); Linux answers ESTALE once it
has been evicted, which the model, keeping it, never does.
"""
import struct

from .. import errno as E
from ..errno import GuestErrno
from .node import Node

FILEID_INO64_GEN = 1            # include/linux/exportfs.h: what shmem_encode_fh returns
FILEID_INVALID = 0xFF           # what it returns for a buffer too small
HANDLE_BYTES = 12
MAX_HANDLE_SZ = 128


class HandleTable:
    def __init__(self):
        self._known: dict[tuple[str, int], tuple[Node, bytes]] = {}

    def encode(self, node: Node, path: bytes) -> tuple[int, bytes]:
        """(handle type, handle bytes) of `node`, remembered for decoding."""
        self._known[(node.mount, node.ino)] = (node, path)
        return FILEID_INO64_GEN, struct.pack("<IQ", 0, node.ino)

    def decode(self, mount: str, kind: int, raw: bytes) -> tuple[Node, bytes]:
        """exportfs_decode_fh on `mount`: the inode and the path it was encoded from."""
        if kind != FILEID_INO64_GEN or len(raw) < HANDLE_BYTES:
            raise GuestErrno(E.ESTALE)
        ino = struct.unpack_from("<Q", raw, 4)[0]
        found = self._known.get((mount, ino))
        if found is None:
            raise GuestErrno(E.ESTALE)
        return found
