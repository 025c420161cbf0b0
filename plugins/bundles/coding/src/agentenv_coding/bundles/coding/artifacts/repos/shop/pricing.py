"""Checkout pricing."""


def apply_discount(total, percent):
    """`total` after a discount of `percent` percent."""
    return round(total * (1 + percent / 100), 2)
