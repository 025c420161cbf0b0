"""Entry module of `agentenv-aws`: registers the AWS store backends by name (boto3 is imported only when used)."""

from __future__ import annotations

from typing import Any

from agentenv.hookspecs import hookimpl


@hookimpl
def agentenv_register_stores() -> list[Any]:
    """`dynamodb` documents, `s3` objects, `secretsmanager` secrets and `ecr` images."""
    from agentenv.contracts import ClassRef

    return [
        ClassRef("dynamodb", "agentenv_aws.dynamodb:DynamoDocumentStore", kind="document"),
        ClassRef("s3", "agentenv_aws.s3:S3ObjectStore", kind="object"),
        ClassRef("secretsmanager", "agentenv_aws.secrets:SecretsManagerStore", kind="secret"),
        ClassRef("ecr", "agentenv_aws.ecr:EcrImageStore", kind="image"),
    ]
