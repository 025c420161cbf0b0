import unittest

from textkit import slugify, words


class TestSlugify(unittest.TestCase):
    def test_spaces_become_dashes(self):
        self.assertEqual(slugify("Hello World"), "hello-world")

    def test_punctuation_is_dropped(self):
        self.assertEqual(slugify("Hello, World!"), "hello-world")

    def test_runs_collapse_and_ends_are_trimmed(self):
        self.assertEqual(slugify("  --Big   News--  "), "big-news")

    def test_words_still_work(self):
        self.assertEqual(words("A b"), ["a", "b"])
