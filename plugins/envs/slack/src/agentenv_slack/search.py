"""Turning a search box query into SQL: FTS5 MATCH when the index exists, LIKE otherwise.

A query is whitespace-separated terms, or "quoted phrases"; every term must match. With FTS5 a term
matches words that start with it (`refund` finds "refunds"), case- and accent-insensitively, and
hits are ranked by BM25; without FTS5 a term matches anywhere in the text, newest first.
"""

from __future__ import annotations

import re

_TERM = re.compile(r'"([^"]*)"|(\S+)')
_WORD = re.compile(r"\w")


def parse_terms(query: str) -> list[str]:
    """The query's terms; terms without a letter or digit (punctuation only) are dropped."""
    terms = []
    for phrase, word in _TERM.findall(query):
        term = (phrase or word).strip()
        if _WORD.search(term):
            terms.append(term)
    return terms


def fts_match(terms: list[str]) -> str:
    """An FTS5 MATCH expression: each term a quoted phrase whose last word may be a prefix."""
    return " AND ".join('"' + term.replace('"', '""') + '"*' for term in terms)


def like_clauses(terms: list[str], column: str) -> tuple[str, list[str]]:
    """`column LIKE ? AND …` with escaped patterns, for SQLite builds without FTS5."""
    patterns = []
    for term in terms:
        escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        patterns.append(f"%{escaped}%")
    sql = " AND ".join(f"{column} LIKE ? ESCAPE '\\'" for _ in terms)
    return sql, patterns
