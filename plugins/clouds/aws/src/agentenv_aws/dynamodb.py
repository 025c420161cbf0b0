"""DynamoDB document store: one table holds every collection; documents come back newest first.

Item layout: partition key `c` (collection), sort key `id`; `doc` the document as JSON text; `seq` the
write order; `rev` a random revision that compare-and-set conditions on. A local secondary index on
(`c`, `seq`) answers "newest first" with one Query, read consistently and paged `page_size` items at a time.
`seq` is nanoseconds since the epoch, kept strictly increasing within a process; writes from several
machines within the same clock skew may list in either order.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from agentenv.contracts import DocumentStore
from agentenv_store_local.api import (
    PagedQueries,
    check_names,
    dump_document,
    load_document,
    next_write_stamp,
    same_document,
)
from pydantic import BaseModel, Field

from agentenv_aws._client import AwsSettings, client, error_code, explain

INDEX = "by_seq"


class DynamoSettings(AwsSettings):
    """Settings of the `dynamodb` document store."""

    table: str = Field("agentenv-records", description="Table holding every collection.")
    create_table: bool = Field(True, description="Create the table (on-demand billing) when it does not exist.")
    page_size: int = Field(1000, ge=1, le=10_000, description="Items read per Query page.")


class DynamoDocumentStore(PagedQueries, DocumentStore[DynamoSettings]):
    """Run and step records as JSON documents in one DynamoDB table."""

    name = "dynamodb"
    description = "JSON documents in one DynamoDB table, newest first through a local secondary index."
    Settings = DynamoSettings

    def __init__(self, settings: BaseModel | dict[str, Any] | None = None) -> None:
        super().__init__(settings)
        self.config = self.settings  # typed by the class parameter, validated once
        self.page_size = self.config.page_size
        self.table = self.config.table
        self._client = client(self.config, "dynamodb")
        if self.config.create_table:
            self._ensure_table()

    def _fail(self, exc: BaseException, what: str) -> Exception:
        return explain(exc, f"DynamoDB table {self.table!r}: {what}", "document", "table")

    def _ensure_table(self) -> None:
        try:
            self._client.describe_table(TableName=self.table)
            return
        except Exception as exc:
            if error_code(exc) != "ResourceNotFoundException":
                raise self._fail(exc, "describe") from exc
        try:
            self._client.create_table(
                TableName=self.table,
                BillingMode="PAY_PER_REQUEST",
                AttributeDefinitions=[
                    {"AttributeName": "c", "AttributeType": "S"},
                    {"AttributeName": "id", "AttributeType": "S"},
                    {"AttributeName": "seq", "AttributeType": "N"},
                ],
                KeySchema=[{"AttributeName": "c", "KeyType": "HASH"}, {"AttributeName": "id", "KeyType": "RANGE"}],
                LocalSecondaryIndexes=[
                    {
                        "IndexName": INDEX,
                        "KeySchema": [
                            {"AttributeName": "c", "KeyType": "HASH"},
                            {"AttributeName": "seq", "KeyType": "RANGE"},
                        ],
                        "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["doc"]},
                    }
                ],
            )
        except Exception as exc:
            if error_code(exc) != "ResourceInUseException":  # another process created it meanwhile
                raise self._fail(exc, "create") from exc
        self._client.get_waiter("table_exists").wait(TableName=self.table, WaiterConfig={"Delay": 1})

    def _item(self, collection: str, doc_id: str, text: str) -> dict[str, Any]:
        return {
            "c": {"S": collection},
            "id": {"S": doc_id},
            "doc": {"S": text},
            "seq": {"N": str(next_write_stamp())},
            "rev": {"S": uuid.uuid4().hex},
        }

    def put(self, collection: str, doc_id: str, doc: dict[str, Any]) -> None:
        check_names(collection, doc_id)
        item = self._item(collection, doc_id, dump_document(doc, collection, doc_id))
        try:
            self._client.put_item(TableName=self.table, Item=item)
        except Exception as exc:
            raise self._fail(exc, f"put {collection}/{doc_id}") from exc

    def put_if(self, collection: str, doc_id: str, doc: dict[str, Any], expected: dict[str, Any] | None) -> bool:
        """Read the stored revision, compare the document, then write on the condition that the revision is
        still the one read: a writer that raced in between makes the condition fail, and put_if says False."""
        check_names(collection, doc_id)
        item = self._item(collection, doc_id, dump_document(doc, collection, doc_id))
        stored = self._get_item(collection, doc_id, "doc, rev")
        if not same_document(None if stored is None else load_document(stored["doc"]["S"]), expected):
            return False
        if stored is None:
            condition: dict[str, Any] = {"ConditionExpression": "attribute_not_exists(id)"}
        else:
            condition = {"ConditionExpression": "rev = :rev", "ExpressionAttributeValues": {":rev": stored["rev"]}}
        try:
            self._client.put_item(TableName=self.table, Item=item, **condition)
        except Exception as exc:
            if error_code(exc) == "ConditionalCheckFailedException":
                return False
            raise self._fail(exc, f"put {collection}/{doc_id}") from exc
        return True

    def _get_item(self, collection: str, doc_id: str, projection: str) -> dict[str, Any] | None:
        try:
            found = self._client.get_item(
                TableName=self.table,
                Key={"c": {"S": collection}, "id": {"S": doc_id}},
                ConsistentRead=True,
                ProjectionExpression=projection,
            )
        except Exception as exc:
            raise self._fail(exc, f"get {collection}/{doc_id}") from exc
        item: dict[str, Any] | None = found.get("Item")
        return item

    def get(self, collection: str, doc_id: str) -> dict[str, Any] | None:
        check_names(collection, doc_id)
        item = self._get_item(collection, doc_id, "doc")
        return None if item is None else load_document(item["doc"]["S"])

    def _newest(self, collection: str, page: int) -> Iterator[str]:
        """The collection's documents as JSON text, newest first, one Query page at a time (read lazily)."""
        request: dict[str, Any] = {
            "TableName": self.table,
            "IndexName": INDEX,
            "KeyConditionExpression": "c = :c",
            "ExpressionAttributeValues": {":c": {"S": collection}},
            "ProjectionExpression": "doc",
            "ScanIndexForward": False,
            "ConsistentRead": True,
            "Limit": page,
        }
        while True:
            try:
                found = self._client.query(**request)
            except Exception as exc:
                raise self._fail(exc, f"query {collection}") from exc
            yield from (item["doc"]["S"] for item in found.get("Items", []))
            if "LastEvaluatedKey" not in found:
                return
            request["ExclusiveStartKey"] = found["LastEvaluatedKey"]

    def delete(self, collection: str, doc_id: str) -> bool:
        check_names(collection, doc_id)
        try:
            found = self._client.delete_item(
                TableName=self.table, Key={"c": {"S": collection}, "id": {"S": doc_id}}, ReturnValues="ALL_OLD"
            )
        except Exception as exc:
            raise self._fail(exc, f"delete {collection}/{doc_id}") from exc
        return "Attributes" in found
