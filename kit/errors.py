"""Typed domain errors, each carrying its HTTP status and contract code.

    ServiceError
     ├── BadRequest              400 bad_request
     ├── Unauthorized            401 unauthorized
     ├── Forbidden               403 forbidden
     ├── NotFound                404 not_found
     ├── MethodNotAllowed        405 method_not_allowed
     ├── Conflict                409 conflict
     ├── PayloadTooLarge         413 payload_too_large
     ├── UnsupportedMediaType    415 unsupported_media_type
     ├── ValidationFailed        422 validation_failed (or a narrower code), with field details
     ├── RateLimited             429 rate_limited, with Retry-After
     ├── PlatformError           502 platform_error
     └── Unavailable             503 unavailable

Front doors render these (the HTTP envelope, an MCP tool error); the message is written for a
person and never carries an exception's text, a token or a key.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FieldProblem:
    field: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"field": self.field, "message": self.message}


class ServiceError(Exception):
    status = 500
    code = "internal_error"
    default_message = "Something went wrong on our side."

    def __init__(
        self,
        message: str | None = None,
        *,
        code: str | None = None,
        details: list[FieldProblem] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.message = message or self.default_message
        if code:
            self.code = code
        self.details = details or []
        self.headers = headers or {}
        super().__init__(self.message)

    def body(self) -> dict[str, object]:
        error: dict[str, object] = {"code": self.code, "message": self.message}
        if self.details:
            error["details"] = [problem.as_dict() for problem in self.details]
        return {"error": error}


class BadRequest(ServiceError):
    status, code, default_message = 400, "bad_request", "The request body is not valid JSON."


class Unauthorized(ServiceError):
    status, code, default_message = 401, "unauthorized", "A valid API key is required."

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message, headers={"WWW-Authenticate": "Bearer"})


class Forbidden(ServiceError):
    status, code, default_message = 403, "forbidden", "This key may not do that."


class NotFound(ServiceError):
    status, code, default_message = 404, "not_found", "No such resource."


class MethodNotAllowed(ServiceError):
    status, code, default_message = 405, "method_not_allowed", "This path does not take that method."


class Conflict(ServiceError):
    status, code, default_message = 409, "conflict", "The resource's state forbids this operation."


class PayloadTooLarge(ServiceError):
    status, code, default_message = 413, "payload_too_large", "The body is larger than 1 MiB."


class UnsupportedMediaType(ServiceError):
    status, code, default_message = 415, "unsupported_media_type", "Send the body as application/json."


class ValidationFailed(ServiceError):
    status, code, default_message = 422, "validation_failed", "Some fields are not valid."

    @classmethod
    def field(cls, field: str, message: str, *, code: str | None = None) -> ValidationFailed:
        return cls(message, code=code, details=[FieldProblem(field, message)])


class RateLimited(ServiceError):
    status, code, default_message = 429, "rate_limited", "Too many requests for this key; slow down."


class PlatformError(ServiceError):
    status, code, default_message = 502, "platform_error", "The platform refused the request."


class Unavailable(ServiceError):
    status, code, default_message = 503, "unavailable", "The service is not available right now."
