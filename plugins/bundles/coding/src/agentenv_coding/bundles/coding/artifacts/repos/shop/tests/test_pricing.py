import unittest

from pricing import apply_discount


class TestPricing(unittest.TestCase):
    def test_no_discount(self):
        self.assertEqual(apply_discount(100, 0), 100)
