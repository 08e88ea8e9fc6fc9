"""MCP tools: sequences."""

from __future__ import annotations

from kit.shapes import page_of
from mcp_server.tooling import ToolDef
from service.sequences import ops as sequences
from service.sequences import shapes as sequence

TOOLS: list[ToolDef] = [
    ToolDef("list_sequences", sequences.list_sequences, "read",
            "Sequences of the workspace with their steps, filtered by account or status (active, paused); "
            "paginated.",
            model=sequence.SequenceQuery, output=page_of(sequence.Sequence)),
    ToolDef("create_sequence", sequences.create, "write",
            "Create a sequence: 1 to 20 timed follow-up DMs (delayMinutes after the previous step) into which "
            "conversations are enrolled by a trigger (conversation_started, comment_automation with automationId, "
            "story_reply filtered by keywords and matchType) or by hand (manual, enroll_in_sequence). On WhatsApp a "
            "step may send template {name, language, parameters} (see list_templates) instead of text: it reaches "
            "contacts outside the 24 h window too.",
            model=sequence.CreateSequence, output=sequence.Sequence, waits=True),
    ToolDef("update_sequence", sequences.update, "write",
            "Change a sequence's fields (the ones left out keep their value). status paused holds every enrolment; "
            "active again sends the steps that fell due, in order.",
            model=sequence.UpdateSequenceTool, output=sequence.Sequence, partial=True, waits=True),
    ToolDef("enroll_in_sequence", sequences.enroll, "write",
            "Enrol a conversation of the sequence's account in the sequence; its steps will reach the contact. A "
            "conversation already active in the sequence gets its enrolment back.",
            model=sequence.EnrollTool, output=sequence.Enrollment, destructive=True, idempotent=True),
]
