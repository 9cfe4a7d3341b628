"""Conversations: every request of a thread, from a script (`render --conversation`).

The embedded spec's `turns:` drive these; the expected texts are built from
the spec's own first requests (another variant's section, a file's text), so
a test fails when the mechanism does, not when a wording changes.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from promptspec.assemble.builder import Assembler
from promptspec.assemble.conversation import conversation
from promptspec.assemble.export import message_item, responses_payload
from promptspec.assemble.matrix import find_variant
from promptspec.cli import main
from promptspec.spec.readers.load import load_spec
from promptspec.spec.readers.scripts import parse_script

REPO = Path(__file__).resolve().parents[2]
TEMPLATES = REPO / "templates"


@pytest.fixture(scope="module")
def spec():
    return load_spec(TEMPLATES)


def script(*steps):
    return parse_script(list(steps), "script.yaml")


def run(spec, steps, model="harbor-5", personality=None, mode=None, axes=None):
    variant = find_variant(spec, model, personality, mode, axes or {})
    return conversation(spec, variant, script(*steps))


def bodies(thread):
    return [responses_payload(t.request) for t in thread]


def user_item(text):
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def section_text(spec, variant_args, fragment):
    req = Assembler(spec).assemble(find_variant(spec, *variant_args))
    (text,) = [s.text for _, _, s in req.sections if s.fragment == fragment]
    return text


def cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def write(tmp_path, data, name="conv.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(data, sort_keys=False) if name.endswith((".yaml", ".yml")) else json.dumps(data), encoding="utf-8")
    return path


# ---------------------------------------------------------------------------
# The first request and a plain second turn


def test_the_first_request_is_render_json_plus_the_prompt_byte_for_byte(tmp_path, capsys):
    args = ["--model", "harbor-5-mini", "--personality", "friendly", "--mode", "plan", "--axis", "sandbox_mode=read-only"]
    code, single, _ = cli(capsys, "render", *args, "--format", "json")
    assert code == 0
    conv = write(tmp_path, {"turns": [{"user": "hello", "reply": "ok"}, {"user": "again", "reply": "ok"}]}, "c.json")
    code, out, _ = cli(capsys, "render", *args, "--conversation", str(conv), "--format", "json")
    assert code == 0
    first = json.loads(out)["requests"][0]
    alone = json.loads(single)
    # The body without the turn's own prompt is render's body, serialised to the same bytes.
    assert first["input"].pop() == user_item("hello")
    tokens, alone_tokens = first.pop("tokens"), alone.pop("tokens")
    assert json.dumps(first, ensure_ascii=False) == json.dumps(alone, ensure_ascii=False)
    # Its tokens are render's plus one user message.
    assert tokens["messages"][:-1] == alone_tokens["messages"]
    assert tokens["total"] == alone_tokens["total"] + tokens["messages"][-1]["tokens"] > alone_tokens["total"]
    assert tokens["instructions"] == alone_tokens["instructions"] and tokens["tools"] == alone_tokens["tools"]


def test_a_second_turn_resends_the_input_then_the_answer_then_the_message(spec):
    one, two = bodies(run(spec, [{"user": "hello", "reply": "It works."}, {"user": "thanks", "reply": "ok"}]))
    assert two["input"] == one["input"] + [
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "It works."}]},
        user_item("thanks"),
    ]
    assert {k: v for k, v in two.items() if k != "input"} == {k: v for k, v in one.items() if k != "input"}


# ---------------------------------------------------------------------------
# Context updates, one per kind of change


def test_a_mode_switch_resends_the_collaboration_mode_of_the_new_mode(spec):
    thread = run(spec, [{"user": "a", "reply": "b"}, {"user": "c", "reply": "d", "set": {"mode": "plan"}}], mode="default")
    new = thread[1].new_messages
    assert [m.role for m in new] == ["assistant", "developer", "user"]
    assert new[1].sections[0].text == section_text(spec, ("harbor-5", None, "plan", {}), "collaboration_mode")
    # No mode change, no update.
    again = run(spec, [{"user": "a", "reply": "b"}, {"user": "c", "reply": "d", "set": {"mode": "default"}}], mode="default")
    assert [m.role for m in again[1].new_messages] == ["assistant", "user"]


def test_a_model_switch_sends_the_new_models_instructions_and_keeps_the_first_ones(spec):
    one, two = run(spec, [{"user": "a", "reply": "b"}, {"user": "c", "reply": "d", "set": {"model": "harbor-5-mini"}}])
    first, second = responses_payload(one.request), responses_payload(two.request)
    mini = Assembler(spec).assemble(find_variant(spec, "harbor-5-mini", None, None, {}))
    assert second["model"] == "harbor-5-mini"
    assert second["instructions"] == first["instructions"] != mini.base.text
    (switch,) = [m for m in two.new_messages if m.sections[0].fragment == "model_switch"]
    assert switch.role == "developer"
    assert mini.base.text in switch.sections[0].text and "harbor-5" in switch.sections[0].text
    # The body's parameters and tools are the new model's.
    assert [k for k, _ in two.request.params] == [k for k, _ in mini.params]
    assert two.request.tools == mini.tools and two.request.tool_placement == mini.tool_placement


def test_a_personality_change_to_none_and_to_a_style(spec):
    thread = run(spec, [{"user": "a", "reply": "b"}, {"user": "c", "reply": "d", "set": {"personality": "friendly"}},
                        {"user": "e", "reply": "f", "set": {"personality": "none"}}], personality="pragmatic")
    friendly = [m for m in thread[1].new_messages if m.sections[0].fragment == "personality_update"]
    none = [m for m in thread[2].new_messages if m.sections[0].fragment == "personality_update"]
    assert len(friendly) == len(none) == 1
    assert (TEMPLATES / "personalities/friendly.md").read_text(encoding="utf-8").strip() in friendly[0].sections[0].text
    assert friendly[0].sections[0].text != none[0].sections[0].text


def test_sandbox_and_approval_changes_send_one_permissions_message(spec):
    thread = run(spec, [{"user": "a", "reply": "b"},
                        {"user": "c", "reply": "d", "set": {"sandbox_mode": "read-only", "approval_policy": "never"}}])
    (perm,) = [m for m in thread[1].new_messages if m.sections[0].fragment == "permissions"]
    text = perm.sections[0].text
    assert (TEMPLATES / "permissions/approval/never.md").read_text(encoding="utf-8").strip() in text
    assert (TEMPLATES / "permissions/sandbox/read-only.md").read_text(encoding="utf-8").split("{")[0].strip() in text
    # The variant follows the axis; the request is the read-only variant's apart from its input.
    assert thread[1].request.variant.value("sandbox_mode") == "read-only"


def test_a_new_working_folder_resends_its_agents_md_chain_and_environment(spec):
    thread = run(spec, [{"user": "a", "reply": "b"}, {"user": "c", "reply": "d", "set": {"cwd": "/home/dev/harbor"}}])
    (update,) = [m for m in thread[1].new_messages if m.role == "user" and m.sections[0].fragment == "folder_change"]
    names = [s.fragment for s in update.sections]
    assert names == ["folder_change", "agents_md", "environment_context"]
    agents = update.sections[1].text
    assert agents.startswith("# AGENTS.md instructions for /home/dev/harbor\n")
    assert (TEMPLATES / "project/AGENTS.md").read_text(encoding="utf-8") in agents
    assert "services/api" not in agents.split("\n", 1)[0]
    assert "<cwd>/home/dev/harbor</cwd>" in update.sections[2].text


# ---------------------------------------------------------------------------
# Skills


def test_a_skill_mention_adds_its_skill_md_after_the_prompt_as_an_explicit_item_does(spec):
    mention = run(spec, [{"user": "Use $release-notes please.", "reply": "ok"}])
    listed = run(spec, [{"user": "Use $release-notes please.", "reply": "ok", "skills": ["release-notes"]}])
    assert bodies(mention) == bodies(listed)
    *_, prompt, skill = mention[0].request.messages
    assert prompt.sections[0].text == "Use $release-notes please."
    assert skill.role == "user" and skill.sections[0].fragment == "skill"
    assert (TEMPLATES / "skills/release-notes/SKILL.md").read_text(encoding="utf-8") in skill.sections[0].text
    # A name that only starts like a skill's is no mention.
    longer = run(spec, [{"user": "see $release-notes-old", "reply": "ok"}])[0].request.messages
    assert longer[-1].sections[0].text == "see $release-notes-old"


# ---------------------------------------------------------------------------
# Compaction


def test_a_manual_compaction_is_its_own_request_then_the_history_is_rebuilt(spec):
    thread = run(spec, [{"user": "first", "reply": "r1"}, {"user": "second", "reply": "r2"},
                        {"compact": True, "reply": "THE SUMMARY"}, {"user": "third", "reply": "r3"}])
    assert [t.kind for t in thread] == ["turn", "turn", "compaction", "turn"]
    comp = responses_payload(thread[2].request)
    before = responses_payload(thread[1].request)
    assert comp["input"][:len(before["input"])] == before["input"]
    assert comp["input"][len(before["input"])]["role"] == "assistant"
    prompt = (TEMPLATES / "fragments/compact_prompt.md").read_text(encoding="utf-8")
    assert "Condense this session" in prompt and "Condense this session" in comp["input"][-1]["content"][0]["text"]
    assert comp["tools"] == [] and comp["parallel_tool_calls"] is False
    after = thread[3]
    assert after.rebuilt and after.new == 0
    kinds = [m.sections[0].fragment for m in after.request.messages]
    first_initial = [m.sections[0].fragment for m in thread[0].request.messages[:-1]]
    # The order the spec gives: user messages, the summary, the initial context, the new message.
    assert kinds == ["(user)", "(user)", "compact_summary", *first_initial, "(user)"]
    assert "THE SUMMARY" in after.request.messages[2].sections[0].text
    assert responses_payload(after.request)["tools"] == before["tools"] != []


def test_auto_compaction_at_the_limit_and_not_one_token_below(spec):
    limit = spec.model("harbor-5").auto_compact_token_limit
    at = run(spec, [{"user": "a", "reply": "b", "usage": limit}, {"user": "c", "reply": "d", "summary": "S"}])
    below = run(spec, [{"user": "a", "reply": "b", "usage": limit - 1}, {"user": "c", "reply": "d"}])
    assert [t.kind for t in at] == ["turn", "compaction", "turn"] and "auto" in at[1].reason
    assert [t.kind for t in below] == ["turn", "turn"]
    # Without a catalog limit: 90 % of the context window.
    window = spec.model("harbor-5-mini").context_window
    assert spec.model("harbor-5-mini").auto_compact_token_limit is None
    mini_at = run(spec, [{"user": "a", "reply": "b", "usage": window * 9 // 10}, {"user": "c", "reply": "d"}], model="harbor-5-mini")
    mini_below = run(spec, [{"user": "a", "reply": "b", "usage": window * 9 // 10 - 1}, {"user": "c", "reply": "d"}], model="harbor-5-mini")
    assert len(mini_at) == 3 and len(mini_below) == 2


def test_model_auto_compact_token_limit_replaces_the_catalogs(tmp_path):
    spec_dir = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec_dir)
    text = (spec_dir / "spec.yaml").read_text(encoding="utf-8")
    (spec_dir / "spec.yaml").write_text(text.replace("scenario:\n", "scenario:\n  model_auto_compact_token_limit: 5000\n", 1), encoding="utf-8")
    spec = load_spec(spec_dir)
    assert len(run(spec, [{"user": "a", "reply": "b", "usage": 5000}, {"user": "c", "reply": "d"}])) == 3
    assert len(run(spec, [{"user": "a", "reply": "b", "usage": 4999}, {"user": "c", "reply": "d"}])) == 2


def test_a_model_switch_across_compaction_families_compacts_first(spec):
    across = run(spec, [{"user": "a", "reply": "b"}, {"user": "c", "reply": "d", "set": {"model": "harbor-4-legacy"}}])
    within = run(spec, [{"user": "a", "reply": "b"}, {"user": "c", "reply": "d", "set": {"model": "harbor-5-mini"}}])
    assert [t.kind for t in across] == ["turn", "compaction", "turn"]
    assert across[1].request.model == "harbor-5" and across[2].request.model == "harbor-4-legacy"
    assert not any(s.fragment == "model_switch" for m in across[2].request.messages for s in m.sections)
    assert [t.kind for t in within] == ["turn", "turn"]


def test_reply_items_echo_the_fields_the_spec_names(tmp_path):
    spec_dir = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec_dir)
    text = (spec_dir / "spec.yaml").read_text(encoding="utf-8")
    text = text.replace("turns:\n", "turns:\n  reply:\n    item: {type: message, status: completed, role: assistant}\n    content: {annotations: []}\n", 1)
    (spec_dir / "spec.yaml").write_text(text, encoding="utf-8")
    spec = load_spec(spec_dir)
    thread = run(spec, [{"user": "a", "reply": "b"}, {"user": "c", "reply": "d"}])
    item = message_item(thread[1].new_messages[0])
    assert json.dumps(item) == json.dumps({"type": "message", "status": "completed", "role": "assistant",
                                           "content": [{"type": "output_text", "text": "b", "annotations": []}]})


# ---------------------------------------------------------------------------
# The command line


def test_render_conversation_json_lists_every_request_in_order(capsys):
    code, out, _ = cli(capsys, "render", "--model", "harbor-5", "--conversation", str(TEMPLATES / "conversations/long-session.yaml"), "--format", "json")
    assert code == 0
    data = json.loads(out)
    assert list(data) == ["requests"]
    reqs = data["requests"]
    assert len(reqs) == 8  # 6 user turns, an automatic compaction before the fifth, a manual one
    assert all(list(r)[-1] == "tokens" and r["model"] == "harbor-5" for r in reqs)
    assert sum(r["tools"] == [] for r in reqs) == 2
    assert [i for i, r in enumerate(reqs) if r["tools"] == []] == [4, 6]
    # The compaction requests extend the history; the turns after them start again without the answers.
    assert reqs[4]["input"][:len(reqs[3]["input"])] == reqs[3]["input"]
    for i in (5, 7):
        assert not any(item["role"] == "assistant" for item in reqs[i]["input"])
        assert reqs[i]["input"][:len(reqs[i - 1]["input"])] != reqs[i - 1]["input"]


def test_render_conversation_text_shows_each_requests_new_items(capsys):
    code, out, _ = cli(capsys, "render", "--conversation", str(TEMPLATES / "conversations/mode-switch.yaml"), "--format", "text")
    assert code == 0
    headers = [line for line in out.splitlines() if line.startswith("=== request")]
    assert len(headers) == 3 and "tokens" in headers[0] and "% of the usable window" in headers[0]
    second = out.split("=== request 2")[1].split("=== request 3")[0]
    assert "--- 3 earlier items re-sent" in second
    assert "message/assistant" in second and "collaboration_mode" in second
    assert "The job loads every row at once." in second


@pytest.mark.parametrize(("steps", "needle"), [
    ([{"user": "a", "reply": "b", "colour": "red"}], "step 1: unknown key 'colour'"),
    ([{"user": "a", "reply": "b"}, {"user": "c", "reply": "d", "set": {"mode": "brainstorm"}}], "step 2: set.mode = 'brainstorm' is a mode the spec lacks"),
    ([{"user": "a", "reply": "b"}, {"user": "c", "reply": "d", "set": {"model": "gpt-9"}}], "step 2: set.model = 'gpt-9' is a model not in the catalog"),
    ([{"user": "a", "reply": "b"}, {"user": "c", "reply": "d", "set": {"colour": "red"}}], "step 2: 'set' names 'colour', which is not a setting"),
    ([{"user": "a", "reply": "b", "skills": ["nope"]}], "step 1: skill 'nope' is not defined"),
    ([{"compact": True, "reply": "b"}], "step 1 is a compaction"),
    ([{"user": "a", "reply": "b"}, {"compact": "yes", "reply": "b"}], "step 2: 'compact' must be true"),
    ([{"user": "a", "reply": "b", "usage": -1}], "step 1: 'usage' must be a whole number"),
    ([{"user": "a", "reply": "b"}] * 201, "201 steps, more than turns.max_steps (200)"),
    ([], "the conversation has no steps"),
])
def test_bad_scripts_stop_with_one_line_naming_file_and_step(tmp_path, capsys, steps, needle):
    path = write(tmp_path, {"turns": steps})
    code, out, err = cli(capsys, "render", "--conversation", str(path), "--format", "json")
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and str(path) in err and needle in err, err


def test_a_bare_list_in_json_works_and_a_missing_file_is_one_line(tmp_path, capsys):
    path = write(tmp_path, [{"user": "a", "reply": "b"}], "bare.json")
    code, out, _ = cli(capsys, "render", "--conversation", str(path), "--format", "json")
    assert code == 0 and len(json.loads(out)["requests"]) == 1
    code, out, err = cli(capsys, "render", "--conversation", str(tmp_path / "missing.yaml"))
    assert code == 2 and out == "" and err.count("\n") == 1 and "missing.yaml" in err


def test_the_embedded_conversations_load_and_every_step_sends_a_request(spec):
    from promptspec.spec.readers.scripts import read_script

    names = [n for n, _ in spec.conversations]
    assert names == ["mode-switch", "model-switch", "long-session"]
    for _, ref in spec.conversations:
        s = read_script(spec.root / ref, ref)
        thread = run(spec, _raw_steps(spec.root / ref))
        assert {t.step for t in thread} == set(range(1, len(s.steps) + 1))


def _raw_steps(path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))["turns"]


def test_an_update_marked_if_different_is_left_out_when_its_text_did_not_change(tmp_path):
    spec_dir = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec_dir)
    text = (spec_dir / "spec.yaml").read_text(encoding="utf-8")
    text = text.replace("    - changed: [sandbox_mode, approval_policy]\n      fragments: [permissions]\n",
                        "    - changed: [sandbox_mode, approval_policy, cwd]\n      fragments: [permissions]\n      if_different: true\n", 1)
    (spec_dir / "spec.yaml").write_text(text, encoding="utf-8")
    spec = load_spec(spec_dir)

    def permissions_sent(settings, axes=None):
        thread = run(spec, [{"user": "a", "reply": "b"}, {"user": "c", "reply": "d", "set": settings}], axes=axes)
        return sum(s.fragment == "permissions" for m in thread[1].new_messages for s in m.sections)

    # Read-only lists no writable roots: a new folder changes nothing in the permissions text.
    assert permissions_sent({"cwd": "/home/dev/harbor"}, {"sandbox_mode": "read-only"}) == 0
    assert permissions_sent({"approval_policy": "never"}, {"sandbox_mode": "read-only"}) == 1
    assert permissions_sent({"approval_policy": "on-request"}) == 0  # set to the value it had


def _edited(tmp_path, *replacements):
    spec_dir = tmp_path / "spec"
    shutil.copytree(TEMPLATES, spec_dir)
    text = (spec_dir / "spec.yaml").read_text(encoding="utf-8")
    for old, new in replacements:
        assert old in text
        text = text.replace(old, new, 1)
    (spec_dir / "spec.yaml").write_text(text, encoding="utf-8")
    return spec_dir


@pytest.mark.parametrize("setting", ["keep", "params", "none"])
def test_input_tools_says_whether_a_compaction_empties_a_tool_list_in_the_input(tmp_path, setting):
    old = "    on_model_switch: compaction_family\n"
    spec = load_spec(_edited(tmp_path, (old, f"{old}    input_tools: {setting}\n")))
    # harbor-5-mini takes its tools as an additional_tools item at the start of the input.
    thread = run(spec, [{"user": "a", "reply": "b"}, {"compact": True, "reply": "S"}, {"user": "c", "reply": "d"}], model="harbor-5-mini")
    first, comp, after = bodies(thread)
    assert first["input"][0]["type"] == "additional_tools" and first["input"][0]["tools"]
    assert "tools" not in comp
    if setting == "none":  # Codex 0.162.0: the compaction request is the history's messages alone
        assert comp["input"][:len(first["input"]) - 1] == first["input"][1:]
    else:
        assert comp["input"][0]["type"] == "additional_tools"
        assert comp["input"][0]["tools"] == ([] if setting == "params" else first["input"][0]["tools"])
        assert comp["input"][1:len(first["input"])] == first["input"][1:]
    # The rebuilt history carries the current tools again.
    assert after["input"][0] == first["input"][0]


def test_input_tools_accepts_only_its_values(tmp_path, capsys):
    old = "    on_model_switch: compaction_family\n"
    spec_dir = _edited(tmp_path, (old, f"{old}    input_tools: drop\n"))
    assert main(["render", "--spec", str(spec_dir), "--format", "json"]) == 2
    err = capsys.readouterr().err
    assert "spec.yaml" in err and "input_tools" in err and "keep" in err


def test_thread_switched_names_what_later_steps_set_and_is_empty_in_a_first_request(tmp_path, capsys):
    # A permissions text that shows what was switched: the start sends nothing more than before.
    spec_dir = _edited(tmp_path)
    perm = spec_dir / "fragments" / "permissions.md"
    perm.write_text(perm.read_text(encoding="utf-8") + '{% if thread.switched %}\nSWITCHED: {{ thread.switched | join(",") }}{% endif %}',
                    encoding="utf-8")
    spec = load_spec(spec_dir)
    plain = load_spec(TEMPLATES)
    variant = find_variant(spec, "harbor-5", None, None, {})
    ours = Assembler(spec).assemble(variant)
    theirs = Assembler(plain).assemble(find_variant(plain, "harbor-5", None, None, {}))
    assert [s.text for _, _, s in ours.sections] == [s.text for _, _, s in theirs.sections]
    thread = run(spec, [{"user": "a", "reply": "b"}, {"user": "c", "reply": "d", "set": {"approval_policy": "never"}},
                        {"user": "e", "reply": "f", "set": {"sandbox_mode": "read-only"}}])
    sent = [s.text for t in thread[1:] for m in t.new_messages for s in m.sections if s.fragment == "permissions"]
    assert [t.split("SWITCHED: ")[-1].split("<")[0] for t in sent] == ["approval_policy", "approval_policy,sandbox_mode"]
    # A setting given at the first step is the start, not a switch.
    started = run(spec, [{"user": "a", "reply": "b", "set": {"approval_policy": "never"}}, {"user": "c", "reply": "d", "set": {"sandbox_mode": "read-only"}}])
    (text,) = [s.text for m in started[1].new_messages for s in m.sections if s.fragment == "permissions"]
    assert text.split("SWITCHED: ")[-1].split("<")[0] == "sandbox_mode"


@pytest.mark.parametrize("kept", [False, True])
def test_session_tools_follow_the_threads_first_model_after_a_switch(tmp_path, kept):
    spec = load_spec(_edited(tmp_path, *([("\nturns:\n", "\nturns:\n  session: {tools: [web_search]}\n")] if kept else [])))

    def searches(body):
        return any(t["type"] == "web_search" for t in body["tools"])

    # web_search goes to models with a web_search_tool_type: harbor-4-legacy's own requests never send it.
    assert not searches(bodies(run(spec, [{"user": "a", "reply": "b"}], model="harbor-4-legacy"))[0])
    thread = bodies(run(spec, [{"user": "a", "reply": "b"}, {"user": "c", "reply": "d", "set": {"model": "harbor-4-legacy"}},
                               {"user": "e", "reply": "f"}]))
    # The switch to another family compacts first: the first turn, the compaction, two turns of harbor-4-legacy.
    assert len(thread) == 4 and searches(thread[0])
    for body in thread[2:]:
        assert body["model"] == "harbor-4-legacy" and searches(body) is kept


def test_session_tools_must_name_a_tool(tmp_path, capsys):
    spec_dir = _edited(tmp_path, ("\nturns:\n", "\nturns:\n  session: {tools: [no_such_tool]}\n"))
    assert main(["render", "--spec", str(spec_dir), "--format", "json"]) == 2
    err = capsys.readouterr().err
    assert "spec.yaml" in err and "no_such_tool" in err


def test_initial_base_and_initial_rest_split_the_rebuilt_context_by_the_base_message(tmp_path):
    old = "    history: [user_messages, summary, initial_context]\n"
    spec = load_spec(_edited(tmp_path, (old, "    history: [initial_rest, user_messages, summary, initial_base]\n")))
    plain = load_spec(TEMPLATES)
    steps = [{"user": "a", "reply": "b"}, {"compact": True, "reply": "S"}, {"user": "c", "reply": "d"}]
    ours, theirs = bodies(run(spec, steps))[2], bodies(run(plain, steps))[2]
    # The embedded spec sends its base instructions in the `instructions` field: no message holds them,
    # so initial_base is empty and initial_rest is the whole initial context, now before the user messages.
    assert ours["instructions"] == theirs["instructions"]
    user, summary = theirs["input"][0], theirs["input"][1]
    initial = theirs["input"][2:-1]
    assert ours["input"] == [*initial, user, summary, theirs["input"][-1]]


def test_a_state_reached_again_is_assembled_once_and_gives_the_same_requests(spec, monkeypatch):
    """conversation.state_request: a thread's switched state is asked for at
    every later turn, and two threads reaching it share it; the requests are
    what assembling each time gives."""
    from promptspec.assemble import conversation as conv

    steps = [{"user": "a", "reply": "b"}, {"user": "c", "reply": "d", "set": {"mode": "plan"}},
             {"user": "e", "reply": "f"}, {"user": "g", "reply": "h"}]
    start = find_variant(spec, "harbor-5", None, "default", {})
    with monkeypatch.context() as m:
        m.setattr(conv, "state_request", lambda asm, v, o=(), s=None: asm.assemble(v, o, None, start=s))
        each_time = [responses_payload(t.request) for t in conv.Conversation(spec).requests(start, script(*steps))]

    asm = Assembler(spec)
    states: list[tuple] = []
    real = asm.assemble
    monkeypatch.setattr(asm, "assemble", lambda v, o=(), thread=None, base_of=None, start=None:
                        (thread is None and states.append((v, o, start))) or real(v, o, thread, base_of, start))
    kept = [responses_payload(t.request) for t in conv.Conversation(spec, asm).requests(start, script(*steps))]
    assert kept == each_time
    assert len(states) == 2  # the start, and the Plan state once for turns 2, 3 and 4
    again = conv.Conversation(spec, asm).requests(start, script(*steps))
    assert [responses_payload(t.request) for t in again] == each_time
    assert len(states) == 2  # a second thread reaching the same states assembles neither


def test_a_thread_from_a_variant_takes_the_first_request_the_pipeline_made(monkeypatch):
    """conversation.know_first_requests (the explorer runs every script from
    every variant): a thread whose first step sets nothing starts with its
    variant's first request as the pipeline assembled it, and assembles only
    the states it switches to; its requests are what assembling them all gives."""
    from promptspec import pipeline
    from promptspec.assemble import conversation as conv

    result = pipeline.run(TEMPLATES)
    spec = result.spec
    start = result.measures[5].request.variant
    steps = [{"user": "a", "reply": "b"}, {"user": "c", "reply": "d", "set": {"mode": "plan"}}]
    assembled = [responses_payload(t.request) for t in conv.Conversation(spec).requests(start, script(*steps))]

    conv.forget_threads()
    conv.know_first_requests(spec, (m.request for m in result.measures))
    asm = conv._LATEST.asm
    states: list[tuple] = []
    real = asm.assemble
    monkeypatch.setattr(asm, "assemble", lambda v, o=(), thread=None, base_of=None, start=None:
                        (thread is None and states.append((v, o))) or real(v, o, thread, base_of, start))
    try:
        thread = conversation(spec, start, script(*steps))
    finally:
        conv.forget_threads()
    assert thread[0].request.base is result.measures[5].request.base  # the pipeline's own request, taken as it is
    assert [responses_payload(t.request) for t in thread] == assembled
    assert len(states) == 1 and states[0] != (start, ()), states  # only the Plan state it switches to
