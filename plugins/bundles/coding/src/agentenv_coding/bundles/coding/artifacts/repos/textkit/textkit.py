"""Small text helpers."""


def words(text):
    """The words of `text`, lower-cased."""
    return text.lower().split()
