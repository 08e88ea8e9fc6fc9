"""YouTube has no webhook for comments: its inbox is read by polling `commentThreads.list` (and the
known threads again by id), each page parsed here into the events a webhook would give."""

from __future__ import annotations

from typing import Any

from platforms.inbound import InboundEvent, from_iso


def _youtube_comment(channel: str, thread_id: str, video: Any, comment: dict[str, Any], *, top: bool) -> InboundEvent:
    snippet = comment.get("snippet") or {}
    comment_id = str(comment.get("id", ""))
    author = str((snippet.get("authorChannelId") or {}).get("value", ""))
    text = snippet.get("textOriginal") or snippet.get("textDisplay")
    at = from_iso(snippet.get("publishedAt"))
    key = f"youtube:comment:{comment_id}"
    if author == channel:  # the channel's own reply, through us or on YouTube
        return InboundEvent("youtube", "echo", channel, key, at, contact_id=thread_id, text=text,
                            platform_message_id=comment_id)
    name = snippet.get("authorDisplayName")
    # The thread is the conversation: its starter names it; a reply by someone else adds a message
    # without renaming it.
    return InboundEvent("youtube", "message", channel, key, at, contact_id=thread_id,
                        contact_handle=name if top and isinstance(name, str) and name.startswith("@") else None,
                        contact_name=name if top and isinstance(name, str) else None, text=text,
                        platform_message_id=comment_id, media_id=str(video) if video else None,
                        comment_id=comment_id, parent_comment_id=None if top else thread_id)


def parse_threads(channel: str, page: dict[str, Any]) -> list[InboundEvent]:
    """One page of `commentThreads.list?part=snippet,replies`: each thread's top-level comment and the
    replies listed with it, oldest first within a thread."""
    events = []
    for thread in page.get("items") or []:
        if not isinstance(thread, dict):
            continue
        thread_id = str(thread.get("id", ""))
        snippet = thread.get("snippet") or {}
        top = snippet.get("topLevelComment")
        if isinstance(top, dict):
            events.append(_youtube_comment(channel, thread_id, snippet.get("videoId"), top, top=True))
        replies = [r for r in (thread.get("replies") or {}).get("comments") or [] if isinstance(r, dict)]
        replies.sort(key=lambda reply: str((reply.get("snippet") or {}).get("publishedAt", "")))
        events += [_youtube_comment(channel, thread_id, snippet.get("videoId"), reply, top=False) for reply in replies]
    return events
