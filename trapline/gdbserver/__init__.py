"""`trapline gdbserver`: the GDB remote serial protocol over the US 6,957,421 debugger
(instrumenter/debugger/): packets.py (framing), connection.py (stdio or TCP, acks, Ctrl-C),
target_xml.py (the register description), server.py with queries.py and access.py."""
