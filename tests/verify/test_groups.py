"""verify's report without a Codex: every differing part of a request found
(tools one by one, pretty-printed), and variants that differ the same way
grouped by axis, as diff/check/history group changes."""

from __future__ import annotations

import copy
import json

from promptspec.oracle.compare import compare, short_diff
from promptspec.verify.groups import group
from promptspec.verify.report import as_markdown, as_text
from promptspec.verify.run import Report, VariantResult

PROMPT = "the turn's prompt"
LONG = "Updates the task plan. " + "Each step is short and concrete. " * 40 + "Mark one step in progress at a time."


def _body(approval: str) -> dict:
    return {
        "model": "m",
        "instructions": "You are an agent.",
        "input": [
            {"type": "message", "role": "developer", "content": [
                {"type": "input_text", "text": f"<permissions instructions>\nApproval: {approval}. Ask when approved.\n</permissions instructions>"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": PROMPT}]},
        ],
        "tools": [{"type": "function", "name": "shell", "description": "Runs a command.", "parameters": {"type": "object"}},
                  {"type": "function", "name": "update_plan", "description": LONG, "parameters": {"type": "object"}},
                  {"type": "web_search"}],
        "tool_choice": "auto",
    }


def _ours(codex: dict, *, tool: bool, permissions: bool) -> dict:
    ours = copy.deepcopy(codex)
    ours["input"] = ours["input"][:-1]
    if tool:
        ours["tools"][1]["description"] = LONG.replace("at a time", "at once")
    if permissions:
        part = ours["input"][0]["content"][0]
        part["text"] = part["text"].replace("approved", "Approved")
    return ours


def test_every_part_is_listed_and_the_tool_is_named_with_a_short_readable_diff():
    codex = _body("on-request")
    out = compare(codex, _ours(codex, tool=True, permissions=True), PROMPT, compare_tools=True)
    assert not out.identical
    names = [d.name for d in out.differences]
    assert names == ["permissions", "tool update_plan"]  # both, not only the first
    tool = out.differences[1].diff
    assert "-" in tool and "at a time" in tool and "at once" in tool
    assert max(len(ln) for ln in tool.splitlines()) < 200  # the long description shown around its change
    assert '"name": "update_plan"' not in tool or tool.count("\n") >= 2  # pretty-printed, one key a line


def test_a_tool_only_one_side_sends_and_a_new_order_are_named():
    codex = _body("never")
    ours = _ours(codex, tool=False, permissions=False)
    ours["tools"] = [ours["tools"][2], ours["tools"][0]]
    names = [d.name for d in compare(codex, ours, PROMPT, compare_tools=True).differences]
    assert names == ["tool update_plan", "tools order"]
    assert "only Codex sends this tool" in compare(codex, ours, PROMPT, compare_tools=True).differences[0].diff


def test_short_diff_keeps_short_lines_whole():
    assert short_diff("a\nb\n", "a\nc\n").splitlines()[-2:] == ["-b", "+c"]


def _report(n_models: int = 4) -> Report:
    """24 variants: every one with the tool changed, the on-request ones with the permissions text too."""
    r = Report("0.125.0", "spec", "2026-12-01", matrix_size=24)
    for m in range(n_models):
        for sandbox in ("read-only", "workspace-write"):
            for approval in ("never", "on-request", "untrusted"):
                codex = _body(approval)
                out = compare(codex, _ours(codex, tool=True, permissions=approval == "on-request"), PROMPT, compare_tools=True)
                first = out.first
                r.variants.append(VariantResult(
                    f"model-{m}/{sandbox}/{approval}", {"model": f"model-{m}", "sandbox_mode": sandbox, "approval_policy": approval},
                    out.identical, first.part if first else None, first.diff if first else None, None,
                    [{"name": d.name, "part": d.part, "diff": d.diff} for d in out.differences]))
    return r


def test_variants_that_differ_the_same_way_are_one_group_said_by_axis():
    groups = group([json.loads(json.dumps(v.__dict__)) for v in _report().variants])
    assert [g.headline() for g in groups] == [
        "tool update_plan: all 24 compared variants",
        "permissions: 8 of 24 variants — approval_policy = on-request (all models)",
    ]
    assert all(len(g.diffs) == 1 for g in groups)


def test_text_and_markdown_say_each_difference_once():
    r = _report()
    text, md = as_text(r), as_markdown(r)
    for out in (text, md):
        assert out.count("at once") == 1 and out.count("Approved") == 1
    assert "DIFFERS tool update_plan: all 24 compared variants" in text
    assert "## permissions&#58; 8 of 24 variants — approval&#95;policy &#61; on-request &#40;all models&#41;" in md
    assert "Compared: the instructions field" in md and "prompt&#95;cache&#95;key" in md
