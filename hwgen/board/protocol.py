"""The framed protocol between a host and the bridge of a deployed top, over a UART.

Every command is nine bytes: a command byte and two 32-bit arguments ``a`` and ``b``, little
endian. The bridge answers every command with :data:`ACK` (or :data:`NAK` when it refuses the
command) and then the reply's payload, if any; data follows the command (writes) or the ACK
(reads), least significant byte first, elements in ``element_bytes`` bytes and HMM words in
``word_bytes`` bytes each.

=======  =====================  ==========================  =====================================
byte     command                ``a``, ``b``                after the command / in the reply
=======  =====================  ==========================  =====================================
``P``    identify               (unused)                    reply: :data:`IDENTITY_BYTES` bytes
``W``    write memory           first element, count        ``b`` elements, then the ACK
``R``    read memory            first element, count        reply: ``b`` elements
``S``    set a parameter        index, value                --
``G``    start the job          (unused)                    --
``Q``    status                 (unused)                    reply: 1 byte, bit 0 busy, bit 1 done
``w``    write HMM words        first word address, count   ``b`` words, then the ACK
``r``    read HMM words         first word address, count   reply: ``b`` words
=======  =====================  ==========================  =====================================

Memory commands are refused (NAK) while the job runs. The identity says which deployment
answers: ``HWG``, the protocol version, ``element_bytes``, ``word_bytes``, the number of
run-time parameters, the memory's size in elements and the HMM's layout id (CRC-32 of its
layout), so a host checks it talks to the top its manifest describes. ``done`` is set when the
job's ``done`` strobe has been seen since the last start.
"""

import struct
from dataclasses import dataclass

__all__ = ["ACK", "COMMANDS", "IDENTITY_BYTES", "MAGIC", "NAK", "PROTOCOL", "VERSION",
           "Identity", "command_frame"]

#: The protocol in a paragraph, for manifests (the module documentation has it all).
PROTOCOL = (
    "UART 8N1. Every command is nine bytes: a command byte and two 32-bit little-endian "
    "arguments a and b. The bridge answers 0xA5 (ACK) or 0x15 (NAK, refused), then the reply. "
    "P identify (reply: 'HWG', version, element bytes, word bytes, parameters, memory elements "
    "u32, HMM layout id u32); W write b elements from element a (data follow the command); "
    "R read b elements from a; S set parameter a to b; G start; Q status (1 byte: bit 0 busy, "
    "bit 1 done since start); w write b HMM words from word address a; r read b HMM words from "
    "a. Data least significant byte first. Memory commands are refused while the job runs."
)

ACK = 0xA5
NAK = 0x15
MAGIC = b"HWG"
VERSION = 1

#: Command bytes by name.
COMMANDS = {
    "identify": ord("P"),
    "write_memory": ord("W"),
    "read_memory": ord("R"),
    "set_parameter": ord("S"),
    "start": ord("G"),
    "status": ord("Q"),
    "write_hmm": ord("w"),
    "read_hmm": ord("r"),
}

_IDENTITY = struct.Struct("<3sBBBBII")
IDENTITY_BYTES = _IDENTITY.size

#: Status bits of the ``Q`` reply.
STATUS_BUSY = 1
STATUS_DONE = 2


def command_frame(name, a=0, b=0):
    """The nine bytes of a command."""
    return struct.pack("<BII", COMMANDS[name], a, b)


@dataclass(frozen=True)
class Identity:
    """What a bridge says of itself (the ``P`` reply)."""
    version: int
    element_bytes: int
    word_bytes: int
    params: int
    memory_elements: int
    layout_id: int

    def encode(self):
        return _IDENTITY.pack(MAGIC, self.version, self.element_bytes, self.word_bytes,
                              self.params, self.memory_elements, self.layout_id)

    @classmethod
    def decode(cls, data):
        """The identity in ``data``, or ``None`` when it is not one."""
        if len(data) != IDENTITY_BYTES:
            return None
        magic, *fields = _IDENTITY.unpack(data)
        return cls(*fields) if magic == MAGIC else None

    def to_json(self):
        return {"version": self.version, "element_bytes": self.element_bytes,
                "word_bytes": self.word_bytes, "params": self.params,
                "memory_elements": self.memory_elements, "layout_id": self.layout_id}
