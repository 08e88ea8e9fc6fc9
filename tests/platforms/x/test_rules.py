"""X's post rules: the text weighed X's way (a link 23, CJK and emoji 2) to 280, one video alone or
images, who may reply, a thread's parts, a first comment weighed the same."""

from __future__ import annotations

from platforms.registry import declared
from tests.platforms.rule_checks import IMAGE, VIDEO, problems


def test_text_is_weighed_not_counted():
    assert problems("x", "字" * 140) == {}
    assert "weighs 282 of X's 280" in problems("x", "字" * 141)["targets[0].content"]
    assert declared("x").post_rules.text_size("see https://example.com/" + "a" * 100) == 4 + 23


def test_media_mix_reply_settings_thread_and_first_comment():
    found = problems("x", media=(VIDEO, IMAGE), options={"replySettings": "nobody", "thread": ["ok", " "],
                                                         "firstComment": "字" * 141})
    assert set(found) == {"mediaIds", "targets[0].options.replySettings", "targets[0].options.thread[1]",
                          "targets[0].options.firstComment"}
    assert list(found)[:3] == ["mediaIds", "targets[0].options.replySettings", "targets[0].options.thread[1]"]
