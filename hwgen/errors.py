"""The one exception type for mistakes a user can make."""

__all__ = ["HwgenError"]


class HwgenError(Exception):
    """A user error: bad parameters, unreadable input, a tool that failed.

    The command line prints ``hwgen: error: <message>`` and exits with status 2; the message is
    one line that names the parameter and what is allowed.
    """
