"""Benchmark: what one outbound message costs the sending thread, in instructions, against the bare call.

    python bench/send_cost.py [--messages 220] [--bots N]

One thread sends Telegram `sendMessage` calls to the sandbox emulator (a `switchboard serve
--no-worker` child), first as bare `httpx2` posts, then as the engine's `inbox_work.send` (the claim
with its message's conversation and account, the pace, the adapter's call, the finish with its
touch and event), then in groups of 10 as a worker's task sends them (`MESSAGE_WORK.run_group`: on
PostgreSQL a sent outcome goes with the next claim). The process runs under valgrind's callgrind,
which counts instructions only while each loop runs (the first 20 of each are a warm-up): a count
that the machine's load does not move, unlike a rate or a CPU time on a shared machine. Prints the
counts per message and their ratios. Storage follows SWITCHBOARD_DATABASE_URL /
SWITCHBOARD_QUEUE_URL (give it a fresh database), else SQLite files in a temporary directory.
Without valgrind, it counts CPU time instead.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import httpx2

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.common import embedded_env, free_port, process, send_as_a_task, temp_dir  # noqa: E402

WARM_UP = 20
MEASURED = "BENCH_SEND_COST_MEASURED"  # set in the child that valgrind runs


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, default=220)
    parser.add_argument("--bots", type=int, default=0,
                        help="default 5 under valgrind; 200 without, or the bare loop's pace is refused (429)")
    args = parser.parse_args()
    if shutil.which("valgrind") and not os.environ.get(MEASURED):
        return _under_callgrind()
    counting = bool(os.environ.get(MEASURED))
    # Telegram takes 30 messages a second from a bot: under valgrind one thread sends far fewer than
    # that through 5 bots, at full speed it sends hundreds a second.
    report = _measure(args.messages, args.bots or (5 if counting else 200), counting=counting)
    if not os.environ.get(MEASURED):
        print(json.dumps(report, indent=2))
    return 0


def _under_callgrind() -> int:
    """Run this script again under callgrind and read the two counts it left."""
    folder = Path(temp_dir())
    command = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
               f"--callgrind-out-file={folder}/callgrind.%p.out", sys.executable, *sys.argv]
    subprocess.run(command, env={**os.environ, MEASURED: str(folder)}, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    counts = json.loads((folder / "counts.json").read_text())
    totals = {}
    for part, dump in counts["dumps"].items():
        text = next(folder.glob(f"callgrind.*.out.{dump}")).read_text(errors="replace")
        totals[part] = int(re.search(r"^totals: (\d+)", text, re.M).group(1))  # type: ignore[union-attr]
    per = {part: total / counts["messages"] for part, total in totals.items()}
    print(json.dumps({
        "storage": counts["storage"], "messages": counts["messages"],
        "instructions_per_message": {part: round(value) for part, value in per.items()},
        "ratio": round(per["bare"] / per["engine"], 2),
        "ratio_in_groups": round(per["bare"] / per["engine_in_groups"], 2),
    }, indent=2))
    return 0


def _measure(messages: int, bots: int, *, counting: bool) -> dict[str, object]:
    from kit.settings import Settings
    from service.accounts import adapters
    from service.identity import bootstrap
    from service.inbox import outbound
    from service.inbox import work as inbox_work
    from storage.db import connection, db
    from storage.models import Account, Conversation
    from switchboard.app import prepare
    from switchboard.sandbox_seed import connect
    from tasks.engine import MAX_GROUP

    port = free_port()
    env = embedded_env(str(Path(temp_dir()) / "data"), SWITCHBOARD_BASE_URL=f"http://127.0.0.1:{port}",
                       SWITCHBOARD_SANDBOX="1")
    for name in ("SWITCHBOARD_DATABASE_URL", "SWITCHBOARD_QUEUE_URL"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    settings = Settings.from_env(env)
    env["SWITCHBOARD_DATABASE_URL"], env["SWITCHBOARD_QUEUE_URL"] = settings.database_url, settings.queue_url
    base = settings.base_url
    with process([sys.executable, "-m", "switchboard", "serve", "--no-worker", "--port", str(port)],
                 base + "/v1/health", env=env):
        prepare(settings)
        with connection(), db.atomic():
            tenant = bootstrap.bootstrap(email=f"bench-{uuid.uuid4().hex[:8]}@example.com", password="bench bench")
        http = httpx2.Client(base_url=base, timeout=30)
        chats: list[tuple[Conversation, Account, str]] = []
        for n in range(bots):
            bot = connect(http, api_key=tenant["apiKey"], profile_id=tenant["profileId"], platform="telegram")
            http.post("/sandbox/telegram/inbound-message",
                      json={"accountId": bot["id"], "from": {"id": str(9000 + n)}, "text": "hi"}).raise_for_status()
            with connection():
                account = Account.get_by_id(bot["id"])
                conversation = Conversation.get(Conversation.account == account.id)
            chats.append((conversation, account, adapters.context(account).credentials["botToken"]))

        with connection(), db.atomic():
            ids, grouped = ([outbound.queue_outbound(chats[n % bots][0], chats[n % bots][1], text=f"{tag} {n}",
                                                     nudge=False).id for n in range(messages)]
                            for tag in ("engine", "grouped"))
        client = httpx2.Client(timeout=30)

        def bare(n: int) -> None:
            _, _, token = chats[n % bots]
            client.post(f"{base}/sandbox/telegram/bot{token}/sendMessage",
                        json={"chat_id": str(9000 + n % bots), "text": f"bare {n}"}).raise_for_status()

        dumps: dict[str, int] = {}
        spent: dict[str, float] = {}
        def in_groups(n: int) -> None:
            if n % MAX_GROUP == 0:  # the group's first message sends the group
                send_as_a_task(grouped[n:n + MAX_GROUP])

        parts = (("bare", bare), ("engine", lambda n: inbox_work.send(ids[n])), ("engine_in_groups", in_groups))
        for part, run in parts:
            for n in range(WARM_UP):
                run(n)
            _instrument(counting, on=True)
            started = time.thread_time()
            for n in range(WARM_UP, messages):
                run(n)
            spent[part] = (time.thread_time() - started) / (messages - WARM_UP) * 1e6
            dumps[part] = _instrument(counting, on=False)
    storage = settings.database_url.split(":", 1)[0] + " + " + settings.queue_url.split(":", 1)[0]
    if counting:
        folder = Path(os.environ[MEASURED])
        (folder / "counts.json").write_text(json.dumps({"dumps": dumps, "messages": messages - WARM_UP,
                                                        "storage": storage}))
    return {"storage": storage, "messages": messages - WARM_UP,
            "cpu_us_per_message": {name: round(value) for name, value in spent.items()},
            "ratio": round(spent["bare"] / spent["engine"], 2),
            "ratio_in_groups": round(spent["bare"] / spent["engine_in_groups"], 2)}


_dumped = 0


def _instrument(counting: bool, *, on: bool) -> int:
    """Under callgrind: count from now (`on`), or stop counting and write the count out (its dump's
    number, 1 for the first)."""
    global _dumped
    if not counting:
        return 0
    pid = str(os.getpid())
    subprocess.run(["callgrind_control", "-i", "on" if on else "off", pid], check=True, capture_output=True)
    if on:
        subprocess.run(["callgrind_control", "-z", pid], check=True, capture_output=True)  # zero what came before
        return 0
    subprocess.run(["callgrind_control", "-d", pid], check=True, capture_output=True)
    _dumped += 1
    return _dumped


if __name__ == "__main__":
    sys.exit(main())
