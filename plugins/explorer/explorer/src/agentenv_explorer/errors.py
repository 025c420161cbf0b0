"""The one error type the API turns into a JSON answer: a status code and a message that names the fix."""

from __future__ import annotations


class ApiError(Exception):
    """A request the explorer cannot answer; `status` is the HTTP status, the message says what to change."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def not_found(what: str, fix: str) -> ApiError:
    return ApiError(404, f"{what}; {fix}")


def bad_request(message: str) -> ApiError:
    return ApiError(400, message)
