"""AWS store backends for agentenv: DynamoDB documents, S3 objects, Secrets Manager secrets, ECR images.

Kept light on purpose: boto3 is imported by the backends when they are built, not here.
"""

__version__ = "0.1.0"
