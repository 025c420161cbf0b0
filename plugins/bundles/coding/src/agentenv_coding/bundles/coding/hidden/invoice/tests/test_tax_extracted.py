import inspect
import unittest

import invoice


class TestTaxExtracted(unittest.TestCase):
    def test_with_tax_exists(self):
        self.assertEqual(invoice.with_tax(100.0), 108.0)

    def test_the_rate_is_written_once(self):
        self.assertEqual(inspect.getsource(invoice).count("0.08"), 1)

    def test_totals_use_it(self):
        for name in ("line_total", "order_total", "shipping_total"):
            self.assertIn("with_tax(", inspect.getsource(getattr(invoice, name)), name)
