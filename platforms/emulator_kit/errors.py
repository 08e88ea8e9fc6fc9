"""Each platform's own error shapes, so that an adapter meets in the sandbox the failures it meets in
production; and the error shape of the sandbox's control endpoints (the contract's)."""

from __future__ import annotations

import json
import math
import time
from typing import Any

from platforms.emulator_kit.answer import JSONResponse
from platforms.emulator_kit.state import Fault, random_token

GRAPH = ("instagram", "facebook", "whatsapp", "meta_ads")
# The throttling code and usage type of each Graph platform's business use case.
BUSINESS_USE_CASE = {"instagram": (80002, "instagram"), "facebook": (80006, "messenger"),
                     "meta_ads": (80004, "ads_management")}


def trace_id() -> str:
    return random_token(11)


def graph_error(
    status: int,
    code: int,
    message: str,
    subcode: int | None = None,
    *,
    whatsapp: bool = False,
    details: str | None = None,
    error_type: str = "OAuthException",
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    error: dict[str, Any] = {"message": message, "type": error_type, "code": code}
    if subcode is not None:
        error["error_subcode"] = subcode
    if whatsapp:
        error["error_data"] = {"messaging_product": "whatsapp", "details": details or message}
    elif details:
        error["error_user_msg"] = details
    error["fbtrace_id"] = trace_id()
    return JSONResponse({"error": error}, status_code=status, headers=headers)


def telegram_error(code: int, description: str, retry_after: int | None = None) -> JSONResponse:
    body: dict[str, Any] = {"ok": False, "error_code": code, "description": description}
    if retry_after is not None:
        body["parameters"] = {"retry_after": retry_after}
    return JSONResponse(body, status_code=code)


def tiktok_error(status: int, code: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    body = {"data": {}, "error": {"code": code, "message": message, "log_id": random_token(24)}}
    return JSONResponse(body, status_code=status, headers=headers)


def google_error(
    status: int, reason: str, message: str, *, domain: str = "global", headers: dict[str, str] | None = None
) -> JSONResponse:
    statuses = {
        400: "INVALID_ARGUMENT",
        401: "UNAUTHENTICATED",
        403: "PERMISSION_DENIED",
        404: "NOT_FOUND",
        429: "RESOURCE_EXHAUSTED",
        500: "INTERNAL",
    }
    body = {
        "error": {
            "code": status,
            "message": message,
            "errors": [{"message": message, "domain": domain, "reason": reason}],
            "status": statuses.get(status, "UNKNOWN"),
        }
    }
    return JSONResponse(body, status_code=status, headers=headers)


def x_error(
    status: int, title: str, detail: str, *, kind: str = "about:blank", headers: dict[str, str] | None = None,
    **extra: str,
) -> JSONResponse:
    """`extra`: the fields the problem's type adds (a resource-not-found's `resource_type`,
    `resource_id`, `parameter`, `value`)."""
    # X answers a Problem (RFC 7807) as application/problem+json, as its OpenAPI document says.
    return JSONResponse(
        {"title": title, "detail": detail, "type": kind, "status": status, **extra},
        status_code=status,
        headers=headers,
        media_type="application/problem+json",
    )


def linkedin_error(
    status: int,
    message: str,
    code: str | None = None,
    service_code: int | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    body: dict[str, Any] = {"status": status, "message": message}
    if code:
        body["code"] = code
    if service_code:
        body["serviceErrorCode"] = service_code
    return JSONResponse(body, status_code=status, headers=headers)


def oauth_error(error: str, description: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": error, "error_description": description}, status_code=status)


def auth_error(platform: str) -> JSONResponse:
    """The platform's own answer to a missing, unknown, expired or revoked token."""
    if platform in GRAPH:
        return graph_error(
            401,
            190,
            "Error validating access token: Session has expired or the token is invalid.",
            463,
            whatsapp=platform == "whatsapp",
        )
    if platform == "telegram":
        return telegram_error(401, "Unauthorized")
    if platform == "tiktok":
        return tiktok_error(
            401, "access_token_invalid", "The access token is invalid or not found in the request."
        )
    if platform == "youtube":
        return google_error(
            401, "authError", "Request had invalid authentication credentials. Expected OAuth 2 access token."
        )
    if platform == "x":
        return x_error(401, "Unauthorized", "Unauthorized")
    return linkedin_error(401, "The token used in the request has expired", "EXPIRED_ACCESS_TOKEN", 65601)


def rate_error(platform: str, retry_after: float) -> JSONResponse:
    seconds = max(1, round(retry_after))
    header = {"Retry-After": str(seconds)}
    if platform == "whatsapp":
        return graph_error(
            429,
            130429,
            "(#130429) Rate limit hit",
            whatsapp=True,
            details="Cloud API message throughput has been reached.",
            headers=header,
        )
    if platform in GRAPH:
        # Business-use-case throttling, as Graph does it: no Retry-After, the wait in minutes in
        # `X-Business-Use-Case-Usage`.
        code, kind = BUSINESS_USE_CASE[platform]
        usage = {"sandbox": [{"type": kind, "call_count": 100, "total_cputime": 100, "total_time": 100,
                              "estimated_time_to_regain_access": math.ceil(retry_after / 60)}]}
        return graph_error(
            400, code, f"(#{code}) There have been too many calls from this account. Wait a bit and try again.",
            error_type="OAuthException", headers={"X-Business-Use-Case-Usage": json.dumps(usage)},
        )
    if platform == "telegram":
        return telegram_error(429, f"Too Many Requests: retry after {seconds}", seconds)
    if platform == "tiktok":
        return tiktok_error(429, "rate_limit_exceeded", "API rate limit exceeded.", header)
    if platform == "youtube":
        return google_error(
            429,
            "rateLimitExceeded",
            "The request cannot be completed: rate limit exceeded.",
            domain="youtube.quota",
            headers=header,
        )
    if platform == "x":
        now = int(time.time())
        reset = {"x-rate-limit-reset": str(now + seconds), "x-rate-limit-remaining": "0"}
        if seconds > 15 * 60:
            # Past a 15-minute window: the 24-hour post limit is spent, and only its reset says when.
            reset = {"x-rate-limit-reset": str(now + 15 * 60), "x-rate-limit-remaining": "1",
                     "x-user-limit-24hour-limit": "100", "x-user-limit-24hour-remaining": "0",
                     "x-user-limit-24hour-reset": str(now + seconds)}
        return x_error(429, "Too Many Requests", "Too Many Requests", headers=reset)
    return linkedin_error(429, "Resource level throttle limit exceeded", "TOO_MANY_REQUESTS", headers=header)


def fault_response(platform: str, fault: Fault) -> JSONResponse:
    if fault.status == 429:
        return rate_error(platform, fault.retry_after)
    if fault.status >= 500:
        if platform in GRAPH:
            return graph_error(500, 1, "An unknown error has occurred.", whatsapp=platform == "whatsapp")
        if platform == "telegram":
            return telegram_error(500, "Internal Server Error")
        if platform == "tiktok":
            return tiktok_error(500, "internal_error", "Something went wrong. Please try again later.")
        if platform == "youtube":
            return google_error(500, "backendError", "Backend Error")
        if platform == "x":
            return x_error(500, "Internal Server Error", "Something went wrong.")
        return linkedin_error(500, "Internal Server Error")
    if platform in GRAPH:
        return graph_error(400, 100, "(#100) Invalid parameter", 2018001, whatsapp=platform == "whatsapp")
    if platform == "telegram":
        return telegram_error(400, "Bad Request: chat not found")
    if platform == "tiktok":
        return tiktok_error(400, "invalid_params", "The request parameters are invalid.")
    if platform == "youtube":
        return google_error(400, "invalidValue", "Invalid value.")
    if platform == "x":
        return x_error(
            400,
            "Invalid Request",
            "One or more parameters to your request was invalid.",
            kind="https://api.x.com/2/problems/invalid-request",
        )
    return linkedin_error(400, "Invalid request", "BAD_REQUEST")


def malformed_error(platform: str) -> JSONResponse:
    """The platform's answer to a body it cannot parse."""
    if platform in GRAPH:
        return graph_error(400, 100, "(#100) The parameter could not be parsed", 2018001)
    if platform == "telegram":
        return telegram_error(400, "Bad Request: can't parse JSON object")
    if platform == "tiktok":
        return tiktok_error(400, "invalid_params", "The request body could not be parsed.")
    if platform == "youtube":
        return google_error(400, "parseError", "Parse Error")
    if platform == "x":
        return x_error(400, "Invalid Request", "The request body could not be parsed.")
    return linkedin_error(400, "Request body could not be parsed", "BAD_REQUEST")


def control_error(
    status: int, code: str, message: str, details: list[dict[str, str]] | None = None
) -> JSONResponse:
    error: dict[str, Any] = {"code": code, "message": message}
    if details:
        error["details"] = details
    return JSONResponse({"error": error}, status_code=status)


class ControlInvalid(Exception):
    def __init__(self, details: list[dict[str, str]]) -> None:
        super().__init__("validation failed")
        self.details = details
