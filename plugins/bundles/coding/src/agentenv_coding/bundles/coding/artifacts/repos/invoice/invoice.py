"""Invoice totals. Every total adds 8% tax, rounded to cents."""


def line_total(price, quantity):
    subtotal = price * quantity
    return round(subtotal + subtotal * 0.08, 2)


def order_total(lines):
    subtotal = sum(price * quantity for price, quantity in lines)
    return round(subtotal + subtotal * 0.08, 2)


def shipping_total(fee):
    return round(fee + fee * 0.08, 2)
