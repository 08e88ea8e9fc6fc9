"""The service's wiring, without its front doors: what every process runs on (settings, database,
queue, platforms, the signals' receivers, the engine's kinds of work, the scheduler's jobs) and the
worker that runs that work. `switchboard worker` imports only this, not the HTTP, MCP and OAuth
front doors (`switchboard.app`): a worker starts in half the time (0.5 s) and 30 MB smaller."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kit import files, metrics
from kit import settings as settings_module
from kit.settings import Settings
from service.accounts import adapters, connect
from service.accounts import health as account_health
from service.accounts import work as account_work
from service.analytics import history as analytics_history
from service.analytics import ops as analytics
from service.analytics import work as analytics_work
from service.automations import ops as automations
from service.automations import work as automation_work
from service.broadcasts import completion as broadcast_completion
from service.broadcasts import ops as broadcasts
from service.broadcasts import work as broadcast_work
from service.common import health, idempotency, signals
from service.engine import core as engine
from service.identity import audit_log, invitations, oauth_clients
from service.inbox import conversations, pacer, polling, polls, profiles, sharing
from service.inbox import work as inbox_work
from service.media import library as media_library
from service.media import ops as media_ops
from service.posts import ops as posts
from service.posts import publishing
from service.posts import work as post_work
from service.sequences import ops as sequences
from service.sequences import work as sequence_work
from service.webhooks import delivery as webhook_delivery
from service.webhooks import ops as webhook_ops
from service.webhooks import retention as webhook_retention
from service.webhooks import signing as webhook_signing
from service.webhooks import work as webhook_work
from storage import db as storage_db
from storage.migrations import migrate
from tasks import engine as engine_tasks
from tasks import posts as post_tasks
from tasks import queue, retention, scheduler


@dataclass
class Runtime:
    """What the lifespan started, so it can stop it."""

    consumer: Any = None
    ticker: scheduler.Ticker | None = None
    checkpoints: storage_db.WalCheckpoints | None = None  # SQLite's WAL, folded in by a thread of its own


def wire(settings: Settings) -> None:
    """Connect everything the service runs on, here and nowhere else: the settings each module reads
    (handed in, never fetched), the receivers of each cross-domain signal (`service.common.signals`),
    the engine's kinds of durable work and how they reach the queue, and the scheduler's tick jobs."""
    # The settings each module of the service reads: handed in here, never fetched inside a domain.
    for reads_settings in (connect, oauth_clients, idempotency, media_ops, media_library, polls, polling,
                           webhook_ops, webhook_signing, webhook_delivery, webhook_retention, audit_log, invitations,
                           analytics_history):
        reads_settings.settings.configure(settings)
    signals.disconnect_all()
    # What each kind of platform event stored at /hooks does.
    for kinds, handler in conversations.INBOUND_HANDLERS.items():
        signals.platform_event.connect(handler, *kinds)
    signals.platform_event.connect(automations.comment_received, "comment")
    signals.platform_event.connect(publishing.on_native_post, "post")
    # Sequences enrol new conversations and story replies, and stop when the contact writes.
    signals.conversation_started.connect(sequences.conversation_started)
    signals.contact_wrote.connect(sequences.contact_wrote)
    # A contact's message opens a resolved or snoozed conversation of the shared inbox again.
    signals.contact_wrote.connect(sharing.reopen_on_inbound)
    # A contact known only by a scoped id (Instagram, Facebook) gets their name read from the platform.
    signals.contact_wrote.connect(profiles.contact_wrote)
    # An account's record shows where its inbox stands.
    signals.account_described.connect(polls.describe_account)
    # Broadcast recipients follow their message.
    signals.message_finished.connect(broadcast_completion.message_finished, "broadcast", sent=False)
    signals.message_finished.ride(broadcast_completion.recipient_sent, "broadcast")
    signals.message_failed_later.connect(broadcast_completion.message_failed_later)
    # What an account's permanent deletion takes with it.
    signals.account_deleting.connect(lambda account_id: ("conversations", conversations.delete_for_account(account_id)))
    signals.account_deleting.connect(lambda account_id: ("followerSnapshots", analytics.delete_for_account(account_id)))
    signals.account_deleting.connect(lambda account_id: ("broadcasts", broadcasts.delete_for_account(account_id)))
    signals.account_deleting.connect(lambda account_id: ("postTargets", posts.delete_for_account(account_id)))
    # The outbox's dispatcher starts as soon as events commit.
    signals.events_committed.connect(engine_tasks.batch_nudger(webhook_work.DISPATCH_WORK.name))
    engine.reset()
    engine.configure(settings)  # each kind's lease and policy read their numbers from it
    engine.register(webhook_work.DISPATCH_WORK)
    engine.register(webhook_work.DELIVERY_WORK)
    engine.register(inbox_work.MESSAGE_WORK)
    engine.register(automation_work.REPLY_WORK)
    engine.register(sequence_work.ENROLLMENT_WORK)
    engine.register(broadcast_work.START_WORK)
    engine.register(broadcast_work.SEND_WORK)
    engine.register(post_work.TARGET_WORK)
    engine.register(post_work.DELETION_WORK)
    engine.register(account_work.RENEWAL_WORK)
    engine.register(analytics_work.SNAPSHOT_WORK)
    engine.register(analytics_work.HISTORY_WORK)
    engine.register(inbox_work.LOOKUP_WORK)
    engine.register(inbox_work.POLL_WORK)
    engine.set_nudger(engine_tasks.enqueue)
    scheduler.set_jobs([scheduler.housekeeping, engine_tasks.sweep, broadcast_completion.complete_finished,
                        post_tasks.forget_expired_uploads, retention.forget_old_events, sharing.end_snoozes,
                        account_health.notify_job, retention.forget_old_inbound_records,
                        retention.forget_old_audit_entries])


def prepare(settings: Settings) -> None:
    """Configure the process-wide handles (settings, database, queue, platforms, pace), wire the
    service and upgrade the schema."""
    settings_module.configure(settings)
    if settings.data_dir.exists():
        files.private_dir(settings.data_dir, tighten=True)  # it holds every secret at rest
    metrics.configure(settings.data_dir / "metrics" if settings.metrics_token else None)
    storage_db.initialise(settings.database_url)
    queue.configure(settings)
    adapters.configure(settings)
    pacer.configure(settings)
    health.configure(queue_answers=queue.ping)
    wire(settings)
    migrate()


def start_storage() -> Runtime:
    """What every long-running process runs beside its work: SQLite's checkpoints."""
    return Runtime(checkpoints=storage_db.background_checkpoints())


def start_worker(settings: Settings, *, embedded: bool, workers: int = 4) -> Runtime:
    runtime = start_storage()
    runtime.consumer = queue.consumer(workers=workers, embedded=embedded)
    runtime.consumer.start()
    runtime.ticker = scheduler.Ticker(settings.scheduler_tick_seconds).start()
    return runtime


def stop_worker(runtime: Runtime) -> None:
    if runtime.ticker is not None:
        runtime.ticker.stop()
    if runtime.consumer is not None:
        runtime.consumer.stop(graceful=True)
    if runtime.checkpoints is not None:
        runtime.checkpoints.stop()
    # uvicorn ends a process by raising the signal again, past `atexit`: what is still pending here.
    metrics.flush()
