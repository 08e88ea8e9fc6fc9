"""Control endpoints of the sandbox (CONTRACT section 5), with no auth, under `/{platform}/...`,
that set the sandbox's state: sent, followers, latency, processing, faults, accounts (make a sandbox
account and its credentials), expire-token and age-tokens. The controls that make a platform send
a webhook are in `deliveries.py`."""

from __future__ import annotations

import datetime as dt
import json
import time
from typing import Any

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from platforms.base import PLATFORMS
from platforms.emulator_kit.answer import JSONResponse
from platforms.emulator_kit.core import EmulatorBase, iso_z
from platforms.emulator_kit.errors import ControlInvalid, control_error
from platforms.emulator_kit.state import Account, Fault

# Numbers a control takes (counts, seconds, instants) fit well within this; past it a float overflows,
# or the service cannot keep the value (PostgreSQL's bigint).
MAX_NUMBER = 10**15
# Instants a control takes: from 1970 to the last second of 9999, as the contract's.
LAST_INSTANT = 253402300799


def _not_json(constant: str) -> Any:
    """`json.loads` takes NaN and Infinity, which are not JSON (and no number a control can use)."""
    raise ValueError(constant)


def check(body: Any, spec: dict[str, tuple[type | tuple[type, ...], bool]]) -> dict[str, Any]:
    """A control's body against `spec` (field: (type, required)); unknown fields are refused."""
    if not isinstance(body, dict):
        raise ControlInvalid([{"field": "body", "message": "must be a JSON object"}])
    details = []
    for name, (kind, required) in spec.items():
        if name not in body or body[name] is None:
            if required:
                details.append({"field": name, "message": "is required"})
            continue
        value = body[name]
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            details.append({"field": name, "message": "has the wrong type"})
        elif isinstance(value, int | float) and not isinstance(value, bool) and not -MAX_NUMBER <= value <= MAX_NUMBER:
            details.append({"field": name, "message": f"must be within ±{MAX_NUMBER:.0e}"})
    for name in body:
        if name not in spec:
            details.append({"field": name, "message": "is not a known field"})
    if details:
        raise ControlInvalid(details)
    return body


def timestamp(value: Any) -> float:
    """A control's `timestamp`: ISO 8601 or unix seconds; now when absent."""
    if value is None:
        return time.time()
    try:
        moment = float(value) if isinstance(value, int | float) and not isinstance(value, bool) else (
            dt.datetime.fromisoformat(str(value).replace("Z", "+00:00")).timestamp())
    except ValueError:
        raise ControlInvalid(
            [{"field": "timestamp", "message": "must be ISO 8601 or unix seconds"}]
        ) from None
    if not 0 <= moment <= LAST_INSTANT:
        raise ControlInvalid([{"field": "timestamp", "message": "must be within 1970 to 9999"}])
    return moment


class Controls(EmulatorBase):
    def control_routes(self) -> list[Route]:
        routes = []
        for platform in PLATFORMS:
            routes += [
                Route(f"/{platform}/sent", self.c_sent, methods=["GET"]),
                Route(f"/{platform}/followers", self.c_followers, methods=["POST"]),
                Route(f"/{platform}/latency", self.c_latency, methods=["POST"]),
                Route(f"/{platform}/processing", self.c_processing, methods=["POST"]),
                Route(f"/{platform}/faults", self.c_faults, methods=["POST"]),
                Route(f"/{platform}/accounts", self.c_accounts, methods=["POST"]),
                Route(f"/{platform}/expire-token", self.c_expire, methods=["POST"]),
                Route(f"/{platform}/age-tokens", self.c_age, methods=["POST"]),
            ]
        return routes

    async def _body(self, request: Request) -> Any:
        raw = await request.body()
        if not raw:
            return {}
        try:
            return json.loads(raw, parse_constant=_not_json)
        except (ValueError, RecursionError):
            raise ControlInvalid([{"field": "body", "message": "is not valid JSON"}]) from None

    async def _guard(self, request: Request, run: Any) -> Response:
        try:
            answer: Response = await run(self.platform_of(request), request)
            return answer
        except ControlInvalid as exc:
            return control_error(422, "validation_failed", "The control request is invalid.", exc.details)

    async def _account(self, platform: str, account_id: Any) -> Account:
        account = await self.resolve(platform, account_id)
        if account is None:
            raise LookupError(account_id)
        return account

    @staticmethod
    def _unknown(account_id: Any) -> JSONResponse:
        return control_error(404, "not_found", f"No sandbox account {account_id!r} on this platform.")

    # -- sent, followers, latency, faults, accounts, tokens ----------------------------------
    async def c_sent(self, request: Request) -> Response:
        platform = self.platform_of(request)
        requested = request.query_params.get("accountId")
        account_id = None
        if requested is not None:
            account = await self.resolve(platform, requested)
            if account is None:
                return self._unknown(requested)
            account_id = account.id
        rows = self.state.records(platform, account_id)
        data = [{"accountId": requested or row["platformAccountId"], **row} for row in rows]
        return JSONResponse({"data": data})

    async def c_followers(self, request: Request) -> Response:
        async def run(platform: str, request: Request) -> Response:
            body = check(await self._body(request), {"accountId": (str, True), "followers": (int, True)})
            if body["followers"] < 0:
                raise ControlInvalid([{"field": "followers", "message": "must be >= 0"}])
            try:
                account = await self._account(platform, body["accountId"])
            except LookupError:
                return self._unknown(body["accountId"])
            account.followers = body["followers"]
            return JSONResponse({"accountId": body["accountId"], "followers": account.followers})

        return await self._guard(request, run)

    async def c_latency(self, request: Request) -> Response:
        async def run(platform: str, request: Request) -> Response:
            body = check(await self._body(request), {"milliseconds": (int, True)})
            if not 0 <= body["milliseconds"] <= 60000:
                raise ControlInvalid([{"field": "milliseconds", "message": "must be 0..60000"}])
            self.state.set_latency(platform, body["milliseconds"])
            return JSONResponse({"milliseconds": body["milliseconds"]})

        return await self._guard(request, run)

    async def c_processing(self, request: Request) -> Response:
        """`{seconds?, advanceSeconds?}`: how long video media takes to process from now on (Instagram
        containers), and/or move the emulator's clock on, so processing ends without waiting."""

        async def run(platform: str, request: Request) -> Response:
            body = check(await self._body(request), {"seconds": ((int, float), False),
                                                     "advanceSeconds": ((int, float), False)})
            if body.get("seconds") is not None:
                self.processing_seconds[platform] = float(body["seconds"])
            if body.get("advanceSeconds") is not None:
                self.clock_offset += float(body["advanceSeconds"])
            return JSONResponse({"seconds": self.processing_seconds.get(platform, 0.0),
                                 "clockOffsetSeconds": self.clock_offset})

        return await self._guard(request, run)

    async def c_faults(self, request: Request) -> Response:
        async def run(platform: str, request: Request) -> Response:
            body = check(
                await self._body(request),
                {
                    "accountId": (str, False),
                    "failNext": (int, True),
                    "status": (int, True),
                    "retryAfter": ((int, float), False),
                    "path": (str, False),
                    "holdSeconds": ((int, float), False),
                },
            )
            details = []
            if body["failNext"] < 0:
                details.append({"field": "failNext", "message": "must be >= 0"})
            if body["status"] not in (429, 500, 504, 400):
                details.append({"field": "status", "message": "must be 429, 500, 504 (no answer) or 400"})
            if not 0 <= body.get("holdSeconds", 0) <= 600:
                details.append({"field": "holdSeconds", "message": "must be 0 to 600"})
            if details:
                raise ControlInvalid(details)
            account_id = None
            if body.get("accountId") is not None:
                try:
                    account_id = (await self._account(platform, body["accountId"])).id
                except LookupError:
                    return self._unknown(body["accountId"])
            with self.state.lock:
                faults = self.state.faults.setdefault(platform, [])
                faults[:] = [f for f in faults if f.remaining > 0 and f.account_id != account_id]
                if body["failNext"]:
                    faults.append(
                        Fault(account_id, body["failNext"], body["status"], float(body.get("retryAfter", 5)),
                              body.get("path"), float(body.get("holdSeconds", 30 if body["status"] == 504 else 0)))
                    )
            self.state.touch_faults(platform)
            return JSONResponse(
                {"accountId": body.get("accountId"), "failNext": body["failNext"], "status": body["status"]}
            )

        return await self._guard(request, run)

    async def c_accounts(self, request: Request) -> Response:
        async def run(platform: str, request: Request) -> Response:
            body = check(
                await self._body(request),
                {"username": (str, False), "name": (str, False), "followers": (int, False),
                 "personal": (bool, False), "appId": (str, False)},
            )
            if body.get("personal") and platform != "tiktok":
                raise ControlInvalid([{"field": "personal", "message": "only TikTok tells personal accounts apart"}])
            account = self.new_account(platform, body.get("username"), body.get("name"))
            if body.get("appId"):  # WhatsApp: its token is one of another Meta app
                account.extra["app_id"] = body["appId"]
            account.followers = body.get("followers", account.followers)
            if body.get("personal"):
                account.extra["personal"] = True  # not a TikTok Business Account: no messaging API
                account.extra["login_hint"] = account.username  # the consent page's `login_hint` picks it
            return JSONResponse(
                {
                    "platform": platform,
                    "platformAccountId": account.id,
                    "username": account.username,
                    "displayName": account.display_name,
                    "credentials": self.credentials_for(account),
                },
                status_code=201,
            )

        return await self._guard(request, run)

    async def c_age(self, request: Request) -> Response:
        """Time passes for the account's tokens: each lapses `days` sooner (Instagram's and
        Facebook's run 60 days, so `"days": 55` leaves five)."""

        async def run(platform: str, request: Request) -> Response:
            body = check(await self._body(request), {"accountId": (str, True), "days": ((int, float), True)})
            if not 0 < body["days"] <= 3650:
                raise ControlInvalid([{"field": "days", "message": "must be more than 0 and at most 3650"}])
            try:
                account = await self._account(platform, body["accountId"])
            except LookupError:
                return self._unknown(body["accountId"])
            aged = self.state.age_tokens(platform, account.id, body["days"] * 86400)
            return JSONResponse({"accountId": body["accountId"], "tokens": [
                {"kind": token.kind, "expiresAt": iso_z(token.expires_at or 0)} for token in aged]})

        return await self._guard(request, run)

    async def c_expire(self, request: Request) -> Response:
        async def run(platform: str, request: Request) -> Response:
            body = check(
                await self._body(request), {"accountId": (str, True), "includeRefresh": (bool, False)}
            )
            try:
                account = await self._account(platform, body["accountId"])
            except LookupError:
                return self._unknown(body["accountId"])
            # TikTok's business grant (Business Messaging) has tokens of its own, expired with the others.
            kinds = ("access", "short", "user", "page", "business_access") + (
                ("refresh", "business_refresh") if body.get("includeRefresh") else ())
            count = self.state.expire_tokens(platform, account.id, kinds)
            return JSONResponse({"accountId": body["accountId"], "expired": count, "at": iso_z(time.time())})

        return await self._guard(request, run)
