"""The exceptions the command line turns into an exit status: user errors and suspect
measurements."""

import difflib

__all__ = ["EXIT_USER_ERROR", "EXIT_SUSPECT", "HwgenError", "ParameterError", "SuspectMeasurement",
           "did_you_mean"]

#: Exit status of a command given bad input (or whose tool failed): nothing was written.
EXIT_USER_ERROR = 2
#: Exit status of a command that finished and wrote its outputs, but whose measurement cannot be
#: trusted as it stands (a saturated counter, traffic that differs from the fetch model, a
#: result that differs from its reference); the outputs say which figure and why.
EXIT_SUSPECT = 3


class HwgenError(Exception):
    """A user error: bad parameters, unreadable input, a tool that failed.

    The command line prints ``hwgen: error: <message>`` and exits with status
    :data:`EXIT_USER_ERROR` (2); the message is one line that names the parameter and what is
    allowed.
    """


class ParameterError(ValueError):
    """A parameter given to a library call is invalid, as the call validates it up front.

    A :class:`ValueError` whose message names the parameter first, in Python's terms
    (``jobs must be a positive integer, not 0``); the command line prints it with the option
    that sets the parameter instead (``hwgen: error: -j must be a positive integer, not 0``)
    and exits with status :data:`EXIT_USER_ERROR`. Only validation raises it: any other
    ``ValueError`` is a bug, and shows its traceback.

    Parameters
    ----------
    parameter : str
        The parameter's name, as the function's signature spells it.
    message : str
        What is wrong and what is allowed, the sentence after the name (one that begins with
        ``:`` follows the name directly: ``board: no board named 'x'``).
    """

    def __init__(self, parameter, message):
        super().__init__(parameter, message)
        self.parameter, self.message = parameter, message

    def named(self, name):
        """The message with ``name`` (such as the option that sets the parameter) in place of
        the parameter's name."""
        return f"{name}{'' if self.message.startswith(':') else ' '}{self.message}"

    def __str__(self):
        return self.named(self.parameter)


class SuspectMeasurement(Exception):
    """A command finished, but what it measured is suspect.

    Raised after every output is written (they record it too). The command line prints
    ``hwgen: suspect measurement: <reason>`` and exits with status :data:`EXIT_SUSPECT` (3).
    """


def did_you_mean(value, choices):
    """``"; did you mean 'smart'?"`` for the choice closest to a mistyped ``value``, or ``""``
    when none is close (the cutoff of :func:`difflib.get_close_matches`, as Python's own
    suggestions)."""
    close = difflib.get_close_matches(str(value), [str(choice) for choice in choices], n=1)
    return f"; did you mean {close[0]!r}?" if close else ""
