"""Every kind of work the service runs says, as data, what a failed attempt does to its row: no kind
decides it by hand, and no irreversible call (a message to a person, a public reply, a publish) is
ever made again blindly after a worker lost it."""

from __future__ import annotations

import datetime as dt

from kit import clock
from kit.errors import Conflict
from platforms.base import Indeterminate, ReauthRequired, Rejected, RetryLater
from service.engine import core as engine
from service.engine.outcomes import next_state
from service.inbox.work import POLL_WORK

# Work a person would see twice if it were done twice.
IRREVERSIBLE = {"outbound_message", "public_reply", "post_target"}


def test_every_wired_kind_declares_its_policy_with_statuses_of_its_own_table(service):
    kinds = engine.kinds()
    assert len(kinds) == 13
    for kind in kinds:
        policy = kind.policy
        assert policy.retry_status in kind.ready, kind.name  # a retried row is one a worker may claim again
        assert policy.failed_status not in kind.ready, kind.name  # a failed one is not


def test_irreversible_work_is_at_most_once_both_when_a_call_had_no_answer_and_when_its_worker_died(service):
    irreversible = {kind.name: kind for kind in engine.kinds() if kind.name in IRREVERSIBLE}
    assert set(irreversible) == IRREVERSIBLE
    for kind in irreversible.values():
        assert kind.lost is not None and kind.policy.lost_status == kind.lost, kind.name
        lost = next_state(kind.policy, 1, Indeterminate("timed out"), settings=service)
        assert lost.status == kind.lost and not lost.again, kind.name


def test_a_kind_whose_lease_expired_is_settled_by_the_same_policy_that_settles_a_failure(service):
    """A kind with a lost status is at most once in both ways: the sweep's and the policy's."""
    for kind in engine.kinds():
        if kind.lost is not None:
            assert kind.policy.at_most_once, kind.name


def test_each_kind_fails_a_refusal_and_an_account_gone_for_good_and_waits_when_asked_to(service):
    for kind in engine.kinds():
        refused = next_state(kind.policy, 1, Rejected("no"), settings=service)
        assert refused.status == kind.policy.failed_status and not refused.again, kind.name
        gone = next_state(kind.policy, 1, Conflict("The account was disconnected."), settings=service)
        assert gone.status == kind.policy.failed_status, kind.name
        waited = next_state(kind.policy, 1, RetryLater("slow down", 7.0), settings=service)
        tries_again = kind.policy.cap(service) > 1
        assert waited.again is tries_again, kind.name
        assert waited.status == (kind.policy.retry_status if tries_again else kind.policy.failed_status), kind.name


def test_a_failed_inbox_poll_goes_back_to_idle_due_after_its_interval_or_the_platforms_longer_wait(service):
    """A chore's policy decides it too: whatever failed, the poll is idle, armed again once due."""
    moment = clock.now()
    interval = dt.timedelta(seconds=service.inbox_poll_seconds)
    for failure in (Rejected("no"), ReauthRequired("revoked"), Indeterminate("timed out"), RetryLater("later", 1.0),
                    Conflict("The account was disconnected.")):
        step = next_state(POLL_WORK.policy, 1, failure, settings=service, at=moment)
        assert (step.status, step.next_attempt_at, step.again) == ("idle", moment + interval, False), failure
    longer = service.inbox_poll_seconds * 3
    step = next_state(POLL_WORK.policy, 1, RetryLater("later", longer), settings=service, at=moment)
    assert (step.status, step.next_attempt_at) == ("idle", moment + dt.timedelta(seconds=longer))
