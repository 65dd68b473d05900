"""An AF_PACKET socket (net/packet/af_packet.c), as far as a program sets it up: created by a
holder of CAP_NET_RAW, bound to the one link (lo, rtnetlink.py), with the SOL_PACKET options
that shape its memory-mapped rings, checked as packet_setsockopt and packet_set_ring check them
(LTP's setsockopt02 and the CVE tests around it refuse sizes that would overflow).

The sandbox's loopback traffic is not seen at the link layer: no frame ever reaches a packet
socket (a receive waits, as on a quiet link), and sending a frame is not modeled (EOPNOTSUPP,
said in the run's report once). A ring is only its geometry: the memory is not mapped.

Ring geometry (packet_set_ring): the block size positive and page-aligned, a frame at least
the version's header plus PACKET_RESERVE and 16-byte aligned, whole frames per block, and
tp_frame_nr = frames per block * tp_block_nr, else EINVAL; TPACKET_V3 blocks also hold the
block header and tp_sizeof_priv (BLK_PLUS_PRIV); V3 has no TX ring (EINVAL); a second ring
while one is set is EBUSY, as are PACKET_VERSION and PACKET_RESERVE then; tp_block_nr 0 with
tp_frame_nr 0 takes the ring down.
"""
import struct

from .. import errno as E
from ..errno import GuestErrno
from .constants import MSG_OOB, SOCK_DGRAM, SOCK_RAW
from .unix import UnixSocket

AF_PACKET, SOL_PACKET = 17, 263
PACKET_RX_RING, PACKET_STATISTICS, PACKET_VERSION, PACKET_HDRLEN = 5, 6, 10, 11
PACKET_RESERVE, PACKET_TX_RING, PACKET_VNET_HDR = 12, 13, 15
# int flags packet_setsockopt takes from an int and packet_getsockopt gives back: AUXDATA,
# ORIGDEV, LOSS, VNET_HDR, TIMESTAMP, TX_HAS_OFF, QDISC_BYPASS
FLAG_OPTIONS = {8, 9, 14, 15, 17, 19, 20}
TPACKET_V1, TPACKET_V2, TPACKET_V3 = 0, 1, 2
# sizeof(struct tpacket_hdr), tpacket2_hdr, tpacket3_hdr (PACKET_HDRLEN's answer); a frame
# holds TPACKET_ALIGN of it and a struct sockaddr_ll (TPACKET*_HDRLEN)
HEADER_SIZES = {TPACKET_V1: 32, TPACKET_V2: 32, TPACKET_V3: 48}
SOCKADDR_LL_SIZE = 20
TPACKET_ALIGNMENT, V3_ALIGNMENT, BLK_HDR_LEN = 16, 8, 48
PAGE_SIZE, INT_MAX, UINT_MAX = 4096, 2**31 - 1, 2**32 - 1
TPACKET_REQ = struct.Struct("<4I")          # block_size, block_nr, frame_size, frame_nr
TPACKET_REQ3 = struct.Struct("<7I")         # ... retire_blk_tov, sizeof_priv, feature_req_word
SOCKADDR_LL = struct.Struct("<HHiHBB8s")    # family, protocol (be16), ifindex, hatype, ...
LO_INDEX, ARPHRD_LOOPBACK, ETH_ALEN = 1, 772, 6


def check_create(sock_type: int, may_raw: bool) -> None:
    """packet_create(): CAP_NET_RAW (EPERM), then the type (ESOCKTNOSUPPORT; the obsolete
    SOCK_PACKET is not modeled)."""
    if not may_raw:
        raise GuestErrno(E.EPERM)
    if sock_type not in (SOCK_RAW, SOCK_DGRAM):
        raise GuestErrno(E.ESOCKTNOSUPPORT)


class PacketSocket(UnixSocket):
    family = AF_PACKET
    protocol_name = b"PACKET"           # af_packet.c packet_proto

    def __init__(self, kernel, sock_type: int, protocol: int, ino: int, *, nonblocking: bool):
        super().__init__(kernel, sock_type, ino, nonblocking=nonblocking)
        self.protocol = protocol & 0xFFFF          # po->num: the ethertype, network order
        self.ifindex = 0
        self.version = TPACKET_V1
        self.reserve = 0
        self.rings: dict[int, tuple] = {}          # PACKET_RX_RING/TX_RING -> its geometry
        self.packet_flags: dict[int, int] = {}

    def __repr__(self) -> str:
        return f"<PacketSocket {self.path.decode()} ifindex={self.ifindex}>"

    # ---- addresses --------------------------------------------------------------------------
    def bind_packet(self, raw: bytes) -> None:
        """packet_bind(): a whole sockaddr_ll of AF_PACKET (EINVAL), on lo or no link (ENODEV
        for another index); a protocol of 0 keeps the socket's."""
        if len(raw) < SOCKADDR_LL.size:
            raise GuestErrno(E.EINVAL)
        family, protocol, ifindex = SOCKADDR_LL.unpack_from(raw)[:3]
        if family != AF_PACKET:
            raise GuestErrno(E.EINVAL)
        if ifindex not in (0, LO_INDEX):
            raise GuestErrno(E.ENODEV)
        self.ifindex = ifindex
        self.protocol = protocol or self.protocol

    def sockname(self) -> bytes:
        """packet_getname(): the link's hardware type and address when bound to one."""
        if self.ifindex != LO_INDEX:
            return SOCKADDR_LL.pack(AF_PACKET, self.protocol, self.ifindex, 0, 0, 0, b"")[:12]
        return SOCKADDR_LL.pack(AF_PACKET, self.protocol, self.ifindex, ARPHRD_LOOPBACK, 0,
                                ETH_ALEN, b"")[:12 + ETH_ALEN]

    def peername(self) -> bytes:
        raise GuestErrno(E.EOPNOTSUPP)               # sock_no_getname's answer for a peer

    # ---- options ----------------------------------------------------------------------------
    def set_packet_option(self, level: int, name: int, value: bytes) -> None:
        if level != SOL_PACKET:
            raise GuestErrno(E.ENOPROTOOPT)
        if name in (PACKET_RX_RING, PACKET_TX_RING):
            return self._set_ring(name, value)
        if name in (PACKET_VERSION, PACKET_RESERVE):
            if len(value) != 4:
                raise GuestErrno(E.EINVAL)
            number = struct.unpack("<I", value)[0]
            if name == PACKET_VERSION and number not in HEADER_SIZES or \
                    name == PACKET_RESERVE and number > INT_MAX:
                raise GuestErrno(E.EINVAL)
            self._unless_ringed()
            if name == PACKET_VERSION:
                self.version = number
            else:
                self.reserve = number
            return None
        if name in FLAG_OPTIONS:
            if len(value) < 4 or name == PACKET_VNET_HDR and self.type != SOCK_RAW:
                raise GuestErrno(E.EINVAL)
            if name == PACKET_VNET_HDR:
                self._unless_ringed()
            self.packet_flags[name] = int(struct.unpack_from("<i", value)[0] != 0)
            return None
        raise GuestErrno(E.ENOPROTOOPT)

    def get_packet_option(self, level: int, name: int, value: bytes) -> bytes:
        """packet_getsockopt(): `value` is what the caller's buffer holds (PACKET_HDRLEN
        reads the version it asks about from it)."""
        if level != SOL_PACKET:
            raise GuestErrno(E.ENOPROTOOPT)
        if name == PACKET_VERSION:
            return struct.pack("<i", self.version)
        if name == PACKET_RESERVE:
            return struct.pack("<i", self.reserve)
        if name == PACKET_HDRLEN:
            version = struct.unpack_from("<i", value)[0] if len(value) >= 4 else -1
            if version not in HEADER_SIZES:
                raise GuestErrno(E.EINVAL)
            return struct.pack("<i", HEADER_SIZES[version])
        if name == PACKET_STATISTICS:                # packets, drops (, freeze_q_cnt for V3)
            return bytes(12 if self.version == TPACKET_V3 else 8)
        if name in FLAG_OPTIONS:
            return struct.pack("<i", self.packet_flags.get(name, 0))
        raise GuestErrno(E.ENOPROTOOPT)

    def _unless_ringed(self) -> None:
        if self.rings:
            raise GuestErrno(E.EBUSY)

    def _set_ring(self, name: int, value: bytes) -> None:
        layout = TPACKET_REQ3 if self.version == TPACKET_V3 else TPACKET_REQ
        if len(value) < layout.size:
            raise GuestErrno(E.EINVAL)
        req = layout.unpack_from(value)
        block_size, block_nr, frame_size, frame_nr = req[:4]
        tx = name == PACKET_TX_RING
        if tx and self.version == TPACKET_V3:
            raise GuestErrno(E.EINVAL)               # "Tx-ring is not supported."
        if not block_nr:
            if frame_nr:
                raise GuestErrno(E.EINVAL)
            self.rings.pop(name, None)
            return
        if name in self.rings:
            raise GuestErrno(E.EBUSY)
        header = -(-HEADER_SIZES[self.version] // TPACKET_ALIGNMENT) * TPACKET_ALIGNMENT
        min_frame = header + SOCKADDR_LL_SIZE + self.reserve
        sizeof_priv = req[5] if self.version == TPACKET_V3 else 0
        if not 0 < block_size <= INT_MAX or block_size % PAGE_SIZE or \
                self.version == TPACKET_V3 and block_size < _blk_plus_priv(sizeof_priv) + min_frame \
                or frame_size < min_frame or frame_size % TPACKET_ALIGNMENT:
            raise GuestErrno(E.EINVAL)
        per_block = block_size // frame_size
        if per_block == 0 or per_block > UINT_MAX // block_nr or per_block * block_nr != frame_nr:
            raise GuestErrno(E.EINVAL)
        self.rings[name] = req

    # ---- data -------------------------------------------------------------------------------
    def send(self, data: bytes, flags: int, creds, *, files=(), target=None, named=False,
             raw: bytes | None = None) -> int:
        """packet_sendmsg(): an address shorter than its sll_addr and the hardware address
        length it gives is EINVAL; with no link named nor bound, ENXIO; sending a frame on lo
        is not modeled (EOPNOTSUPP, noted once)."""
        ifindex = self.ifindex
        if raw:
            # the address must reach sll_addr and hold the hardware address it announces
            if len(raw) < 12 or len(raw) < 12 + raw[11]:
                raise GuestErrno(E.EINVAL)
            ifindex = struct.unpack_from("<i", raw, 4)[0]
        if ifindex == 0:
            raise GuestErrno(E.ENXIO)
        note = getattr(self.kernel, "report", None)
        if note is not None and not getattr(self.kernel, "packet_noted", False):
            self.kernel.packet_noted = True
            note("the sandbox models no link-layer frames: an AF_PACKET send is EOPNOTSUPP")
        raise GuestErrno(E.EOPNOTSUPP)

    def check_receivable(self, flags: int) -> None:
        if flags & MSG_OOB:
            raise GuestErrno(E.EOPNOTSUPP)


def _blk_plus_priv(sizeof_priv: int) -> int:
    """BLK_PLUS_PRIV(): the block header and the private area, 8-byte aligned (in 64 bits, as
    the check's (u64) cast makes it)."""
    return BLK_HDR_LEN + (sizeof_priv + V3_ALIGNMENT - 1) // V3_ALIGNMENT * V3_ALIGNMENT
