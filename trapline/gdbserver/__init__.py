"""`trapline gdbserver`: the GDB remote serial protocol over the seed-003 debugger
(instrumenter/debugger/): packets.py (framing), connection.py (stdio or TCP, acks, Ctrl-C),
target_xml.py (the register description), server.py with queries.py and access.py."""
