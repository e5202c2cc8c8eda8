"""The one-line form of an error, as every layer reports it to the user."""

__all__ = ["first_line"]


def first_line(error):
    """The first non-empty line of ``error``'s message, or its type's name when it has none."""
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
