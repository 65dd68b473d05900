"""NETLINK_ROUTE's kernel side (kernel_model/net/rtnetlink.py): what one send gets back."""
import struct
from types import SimpleNamespace

from hypothesis import given, strategies as st

from kernel_model import errno as E
from kernel_model.net.netlink_ports import NetlinkPorts
from kernel_model.net.rtnetlink import (IFF_UP, IFINFOMSG, NLM_F_ACK, NLM_F_CAPPED, NLM_F_DUMP,
                                        NLM_F_MULTI, NLM_F_REQUEST, NLMSG_DONE, NLMSG_ERROR,
                                        NLMSGHDR, RTM_GETADDR, RTM_GETLINK, RTM_NEWADDR,
                                        RTM_NEWLINK, answer)


def sock(portid=-4097):
    return SimpleNamespace(portid=portid, kernel=SimpleNamespace(netlink_ports=NetlinkPorts()))


def request(kind, flags, body=b"", seq=5):
    return NLMSGHDR.pack(NLMSGHDR.size + len(body), kind, flags, seq, 0) + body


def headers(replies):
    return [NLMSGHDR.unpack_from(r) for r in replies]


def link_body(index=0, flags=0, change=0, name=None):
    body = IFINFOMSG.pack(0, 0, index, flags, change)
    if name is not None:
        raw = name + b"\0"
        body += struct.pack("<HH", 4 + len(raw), 3) + raw.ljust(-(-len(raw) // 4) * 4, b"\0")
    return body


def test_a_dump_answers_multi_parts_then_done_and_no_ack():
    s = sock()
    replies = answer(request(RTM_GETADDR, NLM_F_REQUEST | NLM_F_DUMP | NLM_F_ACK, b"\0" * 8), s)
    kinds = [(h[1], h[2], h[3], h[4]) for h in headers(replies)]
    assert kinds == [(RTM_NEWADDR, NLM_F_MULTI, 5, 0xFFFFEFFF)] * 2 + \
        [(NLMSG_DONE, NLM_F_MULTI, 5, 0xFFFFEFFF)]


def test_errors_echo_the_request_and_successes_only_its_header():
    s = sock()
    bad = request(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, link_body())
    (reply,) = answer(bad, s)
    assert NLMSGHDR.unpack_from(reply)[1:3] == (NLMSG_ERROR, 0)
    assert struct.unpack_from("<i", reply, 16)[0] == -E.ENODEV and reply[20:] == bad
    down = request(RTM_NEWLINK, NLM_F_REQUEST | NLM_F_ACK, link_body(1, 0, IFF_UP))
    (ack,) = answer(down, s)
    assert NLMSGHDR.unpack_from(ack)[1:3] == (NLMSG_ERROR, NLM_F_CAPPED)
    assert struct.unpack_from("<i", ack, 16)[0] == 0 and ack[20:] == down[:16]
    assert s.kernel.netlink_ports.loopback_up is False
    (link,) = answer(request(RTM_GETLINK, NLM_F_REQUEST, link_body(name=b"lo")), s)
    assert IFINFOMSG.unpack_from(link, 16)[2:4] == (1, 0x8)        # lo, loopback, down


def test_messages_that_are_no_requests_are_only_acknowledged():
    s = sock()
    assert answer(request(RTM_GETLINK, 0, link_body(1)), s) == []
    (ack,) = answer(request(RTM_GETLINK, NLM_F_ACK, link_body(1)), s)
    assert struct.unpack_from("<i", ack, 16)[0] == 0


@given(st.binary(max_size=200), st.integers(-2**31, 2**31 - 1))
def test_any_bytes_get_well_formed_replies(data, portid):
    """Whatever a guest sends, the kernel answers with whole netlink messages addressed to
    the sender (never an exception: a KernelPanic in the sandbox)."""
    replies = answer(data, sock(portid))
    for reply in replies:
        length, _, _, _, to = NLMSGHDR.unpack_from(reply)
        assert length == len(reply) and to == portid & 0xFFFFFFFF


@given(st.lists(st.sampled_from([RTM_GETLINK, RTM_NEWLINK, RTM_GETADDR, 0x40]), min_size=1,
                max_size=4), st.booleans())
def test_every_request_of_a_batch_is_answered(kinds, ack):
    """netlink_rcv_skb walks every message of one send: with NLM_F_ACK each one that is no dump
    gets exactly one NLMSG_ERROR (its error or 0)."""
    flags = NLM_F_REQUEST | (NLM_F_ACK if ack else 0)
    batch = b"".join(request(k, flags, link_body(1), seq=i) for i, k in enumerate(kinds))
    errors = [h for h in headers(answer(batch, sock())) if h[1] == NLMSG_ERROR]
    assert [h[3] for h in errors] == [i for i, k in enumerate(kinds)
                                      if ack or k not in (RTM_GETLINK, RTM_NEWLINK)]


def test_the_interface_ioctls_and_netlink_show_one_lo():
    """SIOCSIFMTU and SIOCSIFFLAGS (net/sock_ioctl.py) change the lo that RTM_GETLINK
    describes (its IFLA_MTU was a constant 65536, whatever the ioctl set)."""
    from kernel_model.creds import ROOT
    from kernel_model.net.sock_ioctl import SIOCGIFMTU, SIOCSIFFLAGS, SIOCSIFMTU, socket_ioctl as sock_ioctl
    from kernel_model.net.namespace import NetNamespace
    from kernel_model.user_namespace import INITIAL

    net = NetNamespace(1, INITIAL, unix_inodes={})
    memory = bytearray(64)
    ctx = SimpleNamespace(proc=SimpleNamespace(creds=ROOT), kernel=None, abi="x86_64",
                          read=lambda at, n: bytes(memory[at:at + n]),
                          write=lambda at, data: memory.__setitem__(slice(at, at + len(data)), data))
    socket = SimpleNamespace(net=net, portid=-4097, kernel=None)
    memory[0:3] = b"lo\0"
    memory[16:20] = struct.pack("<i", 1500)
    assert sock_ioctl(ctx, socket, SIOCSIFMTU, 0) == 0
    memory[16:18] = struct.pack("<H", IFF_UP)
    assert sock_ioctl(ctx, socket, SIOCSIFFLAGS, 0) == 0
    memory[16:20] = bytes(4)
    sock_ioctl(ctx, socket, SIOCGIFMTU, 0)
    assert struct.unpack_from("<i", memory, 16)[0] == 1500
    (link,) = answer(request(RTM_GETLINK, NLM_F_REQUEST, link_body(name=b"lo")), socket)
    assert IFINFOMSG.unpack_from(link, 16)[3] & IFF_UP
    attrs, at = {}, 16 + IFINFOMSG.size
    while at + 4 <= len(link):
        length, kind = struct.unpack_from("<HH", link, at)
        attrs[kind] = link[at + 4:at + length]
        at += -(-length // 4) * 4
    assert struct.unpack("<I", attrs[4]) == (1500,)                     # IFLA_MTU
