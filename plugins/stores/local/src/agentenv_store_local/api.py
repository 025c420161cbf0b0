"""The public API of agentenv-store-local for other store plugins (cloud backends import only this).

Every backend refuses the same keys, names and image references and matches queries with the same
JSON equality, so records and objects stay portable between local disk and any cloud.
"""

from agentenv_store_local._files import project_root
from agentenv_store_local.document import (
    PagedQueries,
    check_limit,
    check_names,
    check_query,
    check_where,
    dump_document,
    json_equal,
    load_document,
    matches,
    newest_matches,
    query_page_size,
    same_document,
)
from agentenv_store_local.images import DIGEST, check_ref
from agentenv_store_local.objects import check_key, check_range
from agentenv_store_local.order import next_write_stamp

__all__ = [
    "DIGEST",
    "PagedQueries",
    "check_key",
    "check_limit",
    "check_names",
    "check_query",
    "check_range",
    "check_ref",
    "check_where",
    "dump_document",
    "json_equal",
    "load_document",
    "matches",
    "newest_matches",
    "next_write_stamp",
    "project_root",
    "query_page_size",
    "same_document",
]
