"""kernel_model/debug/signal_pcs.py: the door's part of signal frames that show original PCs —
stepping out of a half-done rendering (asynchronous signals only), the frame's record, and
sigreturn going on where the tool says unless the handler redirected the frame."""
from types import SimpleNamespace

from emu.registers import REGISTER_IDS
from kernel_model.debug.signal_pcs import STEP, SignalFramePcs

TOOL = range(0x7000, 0x7100)          # the tool's copy; 0x7000 + k stands for 0x1000 + k
HALF_DONE = {0x7003, 0x7004}


class _Door(SignalFramePcs):
    def __init__(self):
        super().__init__(self.step_thread)                  # the door gives detach.py's
        self.steps = 0

    def step_thread(self, thread):
        thread.process.machine.pc += 1
        self.steps += 1
        return True


class _Context:
    def __init__(self):
        self.written = {}

    def reg_write(self, reg, value):
        self.written[reg] = value


def _thread(pc, tid=1):
    machine = SimpleNamespace(pc=pc, arch=SimpleNamespace(pc="rip"))
    return SimpleNamespace(tid=tid, process=SimpleNamespace(machine=machine,
                                                            space=SimpleNamespace(serial=3)))


def _translate(thread, pc):
    if pc not in TOOL:
        return None
    if pc in HALF_DONE:
        return STEP
    return pc - 0x6000, lambda t: pc


def test_no_translator_no_change():
    door = _Door()
    thread = _thread(0x7001)
    assert door.signal_frame_pc(thread, synchronous=False) is None
    assert door.signal_return_pc(thread, 0x8000, 0x7001) == 0x7001


def test_an_asynchronous_signal_steps_out_of_a_half_done_rendering():
    door = _Door()
    door.register_signal_pc_translator(_translate)
    thread = _thread(0x7003)
    assert door.signal_frame_pc(thread, synchronous=False) == 0x1005
    assert door.steps == 2
    context = _Context()
    door.signal_frame_built(thread, 0x8000, context)
    assert context.written == {REGISTER_IDS["rip"]: 0x1005}
    assert door.signal_return_pc(thread, 0x8000, 0x1005) == 0x7005
    assert door.signal_return_pc(thread, 0x8000, 0x1005) == 0x1005      # the record is gone


def test_a_fault_is_never_stepped_and_its_frame_keeps_the_tool_address():
    door = _Door()
    door.register_signal_pc_translator(_translate)
    thread = _thread(0x7003)
    assert door.signal_frame_pc(thread, synchronous=True) is None and door.steps == 0


def test_a_redirected_frame_and_abandoned_frames():
    door = _Door()
    door.register_signal_pc_translator(_translate)
    thread = _thread(0x7010)
    door.signal_frame_pc(thread, synchronous=False)
    door.signal_frame_built(thread, 0x8000, _Context())
    thread.process.machine.pc = 0x7020                    # a nested signal, deeper on the stack
    door.signal_frame_pc(thread, synchronous=False)
    door.signal_frame_built(thread, 0x7F00, _Context())
    # The outer frame returns first (the handler siglongjmp'd out of the inner one): the
    # inner record goes with it; the handler had put another PC in the outer frame.
    assert door.signal_return_pc(thread, 0x8000, 0x2222) == 0x2222
    assert door.signal_return_pc(thread, 0x7F00, 0x1020) == 0x1020
    other = _thread(0x7030, tid=2)                        # threads keep their own frames
    door.signal_frame_pc(other, synchronous=False)
    door.signal_frame_built(other, 0x9000, _Context())
    door.forget_signal_frame_pcs(other.process.space)
    assert door.signal_return_pc(other, 0x9000, 0x1030) == 0x1030
