"""What the loopback does with a raw socket's datagram (net/ipv4/ip_input.c
ip_local_deliver_finish, raw.c raw_v4_input, icmp.c icmp_echo; net/ipv6/raw.c
ipv6_raw_deliver, icmp.c icmpv6_echo_reply).

An IPv4 datagram that ip_rcv_core would drop (ip_packet.valid_on_arrival) or whose
destination is not the loopback's is dropped (lo does not forward). Every raw socket of the
datagram's protocol in the namespace receives a copy (raw_v4_match: its bound address is the
destination or any, its connected address the source or none), an ICMP socket unless its
ICMP_FILTER blocks the type (or the message is shorter than the header the filter reads,
which drops it too: 8 bytes for ICMP, 4 for ICMPv6). Then the kernel's own protocol answers: an ICMP echo request with a
good checksum gets an echo reply, from the address it was sent to, without DF (the ICMP
control socket's IP_PMTUDISC_DONT), which loops back to the raw ICMP sockets in turn.
Datagrams of TCP, UDP or another protocol made by a raw socket do not reach the sockets of
that protocol (not modeled). IPv6 is the same without the header on what is received.
A full receive buffer drops the copy (sock_queue_rcv_skb).
"""
import struct

from .constants import AF_INET, AF_INET6
from .inet_address import InetName
from .ip_packet import checksum, header_length, icmpv6_checksum, ipv4_header, valid_on_arrival
from .message import Message

IPPROTO_ICMP, IPPROTO_ICMPV6 = 1, 58
ICMP_ECHOREPLY, ICMP_ECHO = 0, 8
ICMPV6_ECHO_REQUEST, ICMPV6_ECHO_REPLY = 128, 129
ICMP_HEADER = 8             # icmp_filter reads a whole struct icmphdr
ICMPV6_HDRLEN = 4           # icmpv6_filter reads the type, code and checksum only
DEFAULT_TTL = 64            # net.ipv4.ip_default_ttl


def deliver_ipv4(ports, packet: bytes, creds) -> None:
    if not valid_on_arrival(packet):
        return
    packet = packet[:struct.unpack_from(">H", packet, 2)[0]]
    source, destination, protocol = packet[12:16], packet[16:20], packet[9]
    if destination[0] != 127:
        return
    ihl = header_length(packet)
    message = packet[ihl:]
    for sock in _listeners(ports, AF_INET, protocol, source, destination):
        if protocol == IPPROTO_ICMP and (len(message) < ICMP_HEADER or sock.blocks(message[0])):
            continue
        _queue(sock, packet, InetName(AF_INET, source, 0), creds)
    if protocol == IPPROTO_ICMP and len(message) >= ICMP_HEADER and \
            message[0] == ICMP_ECHO and not checksum(message):
        reply = bytes([ICMP_ECHOREPLY]) + message[1:]
        reply = reply[:2] + struct.pack(">H", checksum(reply[:2] + b"\0\0" + reply[4:])) + \
            reply[4:]
        header = ipv4_header(len(reply), tos=packet[1], ident=0, frag=0, ttl=DEFAULT_TTL,
                             protocol=IPPROTO_ICMP, source=destination, destination=source)
        deliver_ipv4(ports, header + reply, creds)


def deliver_ipv6(ports, message: bytes, protocol: int, source: bytes, destination: bytes,
                 creds) -> None:
    for sock in _listeners(ports, AF_INET6, protocol, source, destination):
        if protocol == IPPROTO_ICMPV6 and (len(message) < ICMPV6_HDRLEN or sock.blocks(message[0])):
            continue
        _queue(sock, message, InetName(AF_INET6, source, 0), creds)
    if protocol == IPPROTO_ICMPV6 and len(message) >= ICMP_HEADER and \
            message[0] == ICMPV6_ECHO_REQUEST:
        pseudo = source + destination + struct.pack(">I3xB", len(message), IPPROTO_ICMPV6)
        if checksum(pseudo + message):
            return                               # icmpv6_rcv drops a bad checksum
        reply = icmpv6_checksum(bytes([ICMPV6_ECHO_REPLY]) + message[1:], destination, source)
        deliver_ipv6(ports, reply, IPPROTO_ICMPV6, destination, source, creds)


def _listeners(ports, family: int, protocol: int, source: bytes, destination: bytes) -> list:
    """raw_v4_match/raw_v6_match over the namespace's raw sockets."""
    found = []
    for sock in list(ports.raw_sockets):
        if sock.closed or sock.family != family or sock.protocol != protocol:
            continue
        if sock.name is not None and not sock.name.is_any and sock.name.host != destination:
            continue
        if sock.peer_name is not None and sock.peer_name.host != source:
            continue
        found.append(sock)
    return found


def _queue(sock, data: bytes, sender: InetName, creds) -> None:
    if sock.queue.buffered + len(data) > sock.options.rcvbuf:
        return
    sock.queue.push(Message(data, creds, sender=sender))
    sock._changed()
