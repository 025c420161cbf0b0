import unittest

from invoice import line_total, order_total, shipping_total


class TestInvoice(unittest.TestCase):
    def test_line(self):
        self.assertEqual(line_total(10.0, 3), 32.4)

    def test_order(self):
        self.assertEqual(order_total([(10.0, 1), (5.0, 2)]), 21.6)

    def test_shipping(self):
        self.assertEqual(shipping_total(5.0), 5.4)
