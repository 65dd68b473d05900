"""IPv4 headers and Internet checksums as the loopback carries them (RFC 791, RFC 1071;
net/ipv4/ip_output.c __ip_make_skb builds a header, ip_input.c ip_rcv_core checks one).

Only what a raw socket shows is modeled: a header without options (ihl 5), the fields in
network order, the checksum over the header; ICMPv6's checksum covers an IPv6 pseudo-header
(RFC 8200 section 8.1), which the kernel fills in for a raw ICMPv6 socket.
"""
import struct

IPV4 = struct.Struct(">BBHHHBBH4s4s")     # ver/ihl, tos, tot_len, id, frag, ttl, proto, sum, s, d
IPV4_HEADER = 20
IP_DF = 0x4000
IP_MAX_LENGTH = 0xFFFF


def checksum(data: bytes) -> int:
    """The ones' complement of the ones' complement sum of 16-bit words (RFC 1071)."""
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f">{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def with_checksum(data: bytes, at: int) -> bytes:
    """`data` with the checksum of itself (its field zeroed first) at offset `at`."""
    zeroed = data[:at] + b"\0\0" + data[at + 2:]
    return zeroed[:at] + struct.pack(">H", checksum(zeroed)) + zeroed[at + 2:]


def ipv4_header(payload_length: int, *, tos: int, ident: int, frag: int, ttl: int,
                protocol: int, source: bytes, destination: bytes) -> bytes:
    header = IPV4.pack(0x45, tos, IPV4_HEADER + payload_length, ident, frag, ttl, protocol, 0,
                       source, destination)
    return with_checksum(header, 10)


def header_length(packet: bytes) -> int:
    return (packet[0] & 0xF) * 4


def complete_user_header(packet: bytes, source: bytes) -> bytes:
    """raw_send_hdrinc(): a header the user wrote is kept as given when ihl < 5; otherwise the
    kernel fills a zero source address, sets tot_len to the length sent and recomputes the
    checksum (a zero id stays 0: ip_select_ident gives 0 to a DF packet of no socket, and the
    model picks 0 for the others too, where Linux hashes)."""
    ihl = header_length(packet)
    if ihl < IPV4_HEADER:
        return packet
    if packet[12:16] == bytes(4):
        packet = packet[:12] + source + packet[16:]
    packet = packet[:2] + struct.pack(">H", len(packet)) + packet[4:]
    return with_checksum(packet[:ihl], 10) + packet[ihl:]


def valid_on_arrival(packet: bytes) -> bool:
    """ip_rcv_core(): version 4, ihl at least 5 and within the packet, a correct header
    checksum, a total length neither shorter than the header nor longer than the packet."""
    if len(packet) < IPV4_HEADER or packet[0] >> 4 != 4:
        return False
    ihl = header_length(packet)
    if ihl < IPV4_HEADER or ihl > len(packet) or checksum(packet[:ihl]):
        return False
    total = struct.unpack_from(">H", packet, 2)[0]
    return ihl <= total <= len(packet)


def icmpv6_checksum(message: bytes, source: bytes, destination: bytes) -> bytes:
    """The message with its checksum (offset 2) over the IPv6 pseudo-header: source,
    destination, upper-layer length, next header 58."""
    pseudo = source + destination + struct.pack(">I3xB", len(message), 58)
    zeroed = message[:2] + b"\0\0" + message[4:]
    return zeroed[:2] + struct.pack(">H", checksum(pseudo + zeroed)) + zeroed[4:]
