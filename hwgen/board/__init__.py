"""The board path: a deployed top with a UART bridge, and the host that runs jobs on it.

:mod:`~hwgen.board.protocol` is the framed protocol both sides share; :mod:`~hwgen.board.uart`,
:mod:`~hwgen.board.memory`, :mod:`~hwgen.board.bridge` and :mod:`~hwgen.board.top` are the
hardware; :mod:`~hwgen.board.host` is the host (pyserial) and :mod:`~hwgen.board.cosim` runs it
against the top in simulation through a pseudo-terminal.
"""
