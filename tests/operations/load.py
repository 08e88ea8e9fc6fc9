"""A writer that keeps adding and changing accounts' credentials while a test does something else."""

from __future__ import annotations

import threading
import uuid

from kit import clock, crypto
from storage.db import connection, db
from storage.models import Account
from tests.support.factories import add_account


class Writer:
    """Adds an account with credentials of its own, and re-encrypts an earlier one's, in a loop;
    `written` maps every committed account to the token its credentials hold."""

    def __init__(self, workspace_id: str, profile_id: str) -> None:
        self.workspace_id = workspace_id
        self.profile_id = profile_id
        self.written: dict[str, str] = {}
        self.history: dict[str, set[str]] = {}  # every token each account's credentials ever held
        self.turns = threading.Semaphore(0)  # released after each committed turn
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="test-writer", daemon=True)
        self.error: BaseException | None = None

    def __enter__(self) -> Writer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)

    def wait_turns(self, count: int) -> None:
        """Return once the writer has committed `count` more turns."""
        for _ in range(count):
            assert self.turns.acquire(timeout=30), f"the writer stopped: {self.error!r}"

    def _run(self) -> None:
        try:
            while not self._stop.is_set():
                token = "secret-token-" + uuid.uuid4().hex
                account_id = add_account(self.workspace_id, self.profile_id, credentials={"access_token": token})
                self.history[account_id] = {token}
                self.written[account_id] = token
                earlier = next(iter(self.written))
                renewed = "secret-token-" + uuid.uuid4().hex
                self.history[earlier].add(renewed)  # before the commit: a copy taken then may hold it
                with connection(), db.atomic():
                    Account.update(credentials=crypto.encrypt_json({"access_token": renewed}),
                                   updated_at=clock.now()).where(Account.id == earlier).execute()
                self.written[earlier] = renewed
                self.turns.release()
        except BaseException as error:  # the test reads it when the writer stops short
            self.error = error
            raise
