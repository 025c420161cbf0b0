import unittest

from pricing import apply_discount


class TestDiscount(unittest.TestCase):
    def test_ten_percent_off(self):
        self.assertEqual(apply_discount(100, 10), 90.0)

    def test_rounding(self):
        self.assertEqual(apply_discount(19.99, 15), 16.99)
