"""The Graph API core that Instagram, Facebook, WhatsApp Cloud and the Marketing API share: nodes
(`/{platform}/{version}/{node}`) and edges (`.../{node}/{edge}`), Graph's paging and its errors.

What a node or an edge does is each platform's own (`instagram.py`, `facebook.py`, `messenger.py`,
`whatsapp.py`, `meta_ads.py`): each module lists its edges as `EdgeRoute`s and its node reader, and
a request is dispatched on its platform, method and edge name, then on which node it hangs from
(the account, its WhatsApp Business Account, `me`, one of its posts or comments)."""

from __future__ import annotations

import base64
import dataclasses
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from platforms.emulator_kit.answer import JSONResponse
from platforms.emulator_kit.core import Call, EmulatorBase
from platforms.emulator_kit.errors import GRAPH, graph_error
from platforms.emulator_kit.state import Account

NOT_FOUND_SUBCODE = 33

# Which nodes an edge hangs from.
NodeMatch = Callable[[Account, str], bool]
# (call, account, node) -> the answer.
EdgeHandler = Callable[[Call, Account, str], Response]
# (call, account, node, requested fields) -> the answer to a GET of a node.
NodeReader = Callable[[Call, Account, str, list[str]], Response]


def on_account(account: Account, node: str) -> bool:
    return node == account.id


def on_own(account: Account, node: str) -> bool:
    """The account, or for a WhatsApp number the WhatsApp Business Account it belongs to."""
    return node == account.id or (account.platform == "whatsapp" and node == account.extra.get("waba_id"))


def on_waba(account: Account, node: str) -> bool:
    return node == account.extra.get("waba_id")


def on_me(account: Account, node: str) -> bool:
    return node == "me"


def on_post(account: Account, node: str) -> bool:
    return node in account.posts


def on_comment(account: Account, node: str) -> bool:
    return node in account.comments


@dataclass(frozen=True)
class EdgeRoute:
    """`method /{node}/{edge}` on `platforms`, for the nodes `on` accepts."""

    platforms: tuple[str, ...]
    method: str
    edges: tuple[str, ...]
    on: NodeMatch
    handler: EdgeHandler


EdgeTable = dict[tuple[str, str, str], list[tuple[NodeMatch, EdgeHandler]]]


def edge_table(routes: Iterable[EdgeRoute]) -> EdgeTable:
    """Routes by (platform, method, edge), in the order given: the first whose node matches answers."""
    table: EdgeTable = {}
    for route in routes:
        for platform in route.platforms:
            for edge in route.edges:
                table.setdefault((platform, route.method, edge), []).append((route.on, route.handler))
    return table


def not_found(node: str, method: str = "get") -> JSONResponse:
    return graph_error(
        400,
        100,
        f"Unsupported {method} request. Object with ID '{node}' does not exist, "
        "cannot be loaded due to missing "
        "permissions, or does not support this operation.",
        NOT_FOUND_SUBCODE,
        error_type="GraphMethodException",
    )


def as_obj(value: Any) -> Any:
    """Graph takes JSON objects also as JSON-encoded strings in query or form fields."""
    if isinstance(value, str) and value[:1] in "{[":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def graph_page(request: Request, items: list[Any], default_limit: int = 25) -> JSONResponse:
    """One page of a Graph list, as Graph pages: `limit`, `after`/`before` cursors, and `paging.next`
    (with the cursor) while more remain."""
    try:
        limit = max(1, min(int(request.query_params.get("limit", default_limit)), 100))
    except ValueError:
        limit = default_limit
    after = request.query_params.get("after")
    try:
        start = int(base64.b64decode(after).decode()) + 1 if after else 0
    except ValueError:
        return graph_error(400, 100, "(#100) Invalid after cursor")
    page = items[start : start + limit]

    def cursor(index: int) -> str:
        return base64.b64encode(str(index).encode()).decode()

    paging: dict[str, Any] = {}
    if page:
        paging["cursors"] = {"before": cursor(start), "after": cursor(start + len(page) - 1)}
    if start + limit < len(items):
        query = dict(request.query_params)
        query.pop("access_token", None)
        query.update(limit=str(limit), after=cursor(start + len(page) - 1))
        paging["next"] = f"{str(request.url).split('?')[0]}?{urlencode(query)}"
    return JSONResponse({"data": page, "paging": paging})


def me_node(call: Call, account: Account, node: str, fields: list[str]) -> Response:
    """`GET /me`: the user behind the token."""
    if node == "me":
        return JSONResponse({"id": account.extra.get("user_id", account.id), "name": account.display_name})
    return not_found(node)


class GraphEmulator(EmulatorBase):
    # Filled by the composed emulator from every Graph platform's module.
    graph_edges: EdgeTable
    node_readers: dict[str, NodeReader]

    def graph_routes(self) -> list[Route]:
        routes = []
        for platform in GRAPH:
            routes += [
                Route(
                    f"/{platform}/{{version}}/{{node}}", self.graph_node, methods=["GET", "POST", "DELETE"]
                ),
                Route(f"/{platform}/{{version}}/{{node}}/{{edge}}", self.graph_edge, methods=["GET", "POST"]),
            ]
        return routes

    def subscribed_apps_edges(self) -> list[EdgeRoute]:
        return [EdgeRoute(GRAPH, "POST", ("subscribed_apps",), on_own, self._subscribe)]

    def _subscribe(self, call: Call, account: Account, node: str) -> Response:
        fields = str(call.params().get("subscribed_fields", "messages")).split(",")
        account.subscribed_fields = [f for f in fields if f]
        # `subscribed_apps` subscribes the token's own app: it is that app that sends the webhooks.
        account.extra["subscribed_app"] = call.token.extra.get("app_id") if call.token is not None else None
        return JSONResponse({"success": True})

    def kinds(self, platform: str) -> tuple[str, ...]:
        return {"instagram": ("access", "short"), "facebook": ("page", "user")}.get(
            platform, ("access", "user")
        )

    async def graph_node(self, request: Request) -> Response:
        platform = self.platform_of(request)
        return await self.api(platform, request, self._node, kinds=self.kinds(platform))

    async def graph_edge(self, request: Request) -> Response:
        platform = self.platform_of(request)
        return await self.api(platform, request, self._edge, kinds=self.kinds(platform))

    async def _node(self, call: Call) -> Response:
        account = call.account
        assert account is not None
        node = call.request.path_params["node"]
        sibling = self.sibling(account, node)
        if sibling is not None:  # another Page or ad account the same person's token reaches
            call, account = dataclasses.replace(call, account=sibling), sibling
        method = call.request.method
        fields = str(call.params().get("fields", "")).split(",")
        if method == "DELETE":
            if call.platform == "instagram":
                # The Instagram API with Instagram Login has no way to delete media.
                return graph_error(400, 3, "(#3) Application does not have the capability to make this API call.")
            if node in account.posts:
                account.posts.pop(node)
                self.record(call, "delete_post", node, None, node)
                return JSONResponse({"success": True})
            return not_found(node, "delete")
        if method == "POST":
            return not_found(node, "post")
        return self.node_readers.get(call.platform, me_node)(call, account, node, fields)

    async def _edge(self, call: Call) -> Response:
        account = call.account
        assert account is not None
        node, edge = call.request.path_params["node"], call.request.path_params["edge"]
        sibling = self.sibling(account, node)
        if sibling is not None:  # another Page or ad account the same person's token reaches
            call, account = dataclasses.replace(call, account=sibling), sibling
        method = call.request.method
        adopted = call.platform == "whatsapp" and account.extra.get("waba_id") is None
        if adopted and node.isdigit() and node != account.id:
            account.extra["waba_id"] = node  # a number made from a test credential joins the first WABA asked
        for on, handler in self.graph_edges.get((call.platform, method, edge), []):
            if on(account, node):
                return handler(call, account, node)
        return not_found(f"{node}/{edge}", method.lower())
