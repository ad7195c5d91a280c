"""How commands print figures: an undefined one (``None``) reads ``n/a``, never 0."""

__all__ = ["NOT_AVAILABLE", "figure"]

#: What an undefined figure prints as.
NOT_AVAILABLE = "n/a"


def figure(value, spec=".3f"):
    """``value`` formatted with ``spec``, or :data:`NOT_AVAILABLE` when it is ``None``."""
    return NOT_AVAILABLE if value is None else format(value, spec)
