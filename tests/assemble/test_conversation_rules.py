"""The later-turn rules newer releases need (docs/spec-format.md, turns):
partial updates, `if_different` per kind of change, joined update messages,
the parameters of a switch's compaction, what a rebuilt context leaves out and
keeps, and later fragments with a slot.  Each is tried on a copy of the
embedded spec with the rule added, against the same spec without it.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from promptspec.assemble.conversation import conversation, partial_body
from promptspec.assemble.export import responses_payload
from promptspec.assemble.matrix import find_variant
from promptspec.cli import main
from promptspec.errors import SpecError
from promptspec.spec.readers.load import load_spec
from promptspec.spec.readers.scripts import parse_script
from promptspec.spec.readers.turns import Partial

TEMPLATES = Path(__file__).resolve().parents[2] / "templates"
CWD_ENTRY = "    - changed: [cwd]\n      role: user\n      fragments: [folder_change, agents_md, environment_context]\n"


def edited(tmp_path, old, new, name="spec"):
    spec_dir = tmp_path / name
    shutil.copytree(TEMPLATES, spec_dir)
    text = (spec_dir / "spec.yaml").read_text(encoding="utf-8")
    assert old in text
    (spec_dir / "spec.yaml").write_text(text.replace(old, new, 1), encoding="utf-8")
    return spec_dir


def thread(spec, steps, model="harbor-5", axes=None):
    variant = find_variant(spec, model, None, None, axes or {})
    return conversation(spec, variant, parse_script(list(steps), "script.yaml"))


def sections(treq):
    return [(m.role, [s.fragment for s in m.sections]) for m in treq.new_messages]


TWO = [{"user": "a", "reply": "b"}]


def test_a_partial_body_keeps_changed_lines_those_always_sent_and_those_tied_to_a_sent_line():
    before = "\n  <cwd>/a</cwd>\n  <shell>bash</shell>\n  <date>1</date>\n  <fs>x</fs>\n"
    after = "\n  <cwd>/a</cwd>\n  <shell>bash</shell>\n  <date>1</date>\n  <fs>y</fs>\n"
    rule = Partial(always=("date",), with_=(("shell", "cwd"),))
    # Only <fs> changed: the untagged first line, <date> (always) and <fs>.
    assert partial_body(before, after, rule) == "\n  <date>1</date>\n  <fs>y</fs>\n"
    moved = after.replace("/a", "/b")
    # <cwd> changed too, and <shell> goes with it.
    assert partial_body(before, moved, rule) == moved
    assert partial_body(before, before, Partial()) == "\n"


def test_a_partial_update_sends_only_the_lines_of_the_context_that_changed(tmp_path):
    partial = CWD_ENTRY.replace("fragments: [folder_change, agents_md, environment_context]\n",
                                "fragments: [environment_context]\n      partial: {always: [current_date]}\n")
    spec = load_spec(edited(tmp_path, CWD_ENTRY, partial))
    full = load_spec(TEMPLATES)
    steps = [*TWO, {"user": "c", "reply": "d", "set": {"cwd": "/home/dev/harbor"}}]
    (cut,) = [s for m in thread(spec, steps)[1].new_messages for s in m.sections if s.fragment == "environment_context"]
    (whole,) = [s for m in thread(full, steps)[1].new_messages for s in m.sections if s.fragment == "environment_context"]
    assert "<cwd>/home/dev/harbor</cwd>" in cut.body and "<current_date>" in cut.body
    assert "<shell>" in whole.body and "<shell>" not in cut.body and cut.start == whole.start and cut.end == whole.end


def test_if_different_may_hold_for_some_changes_only(tmp_path):
    old = "    - changed: [mode]\n      fragments: [collaboration_mode]\n"
    listed = "    - changed: [mode, personality]\n      fragments: [collaboration_mode]\n      if_different: [mode]\n"
    spec = load_spec(edited(tmp_path, old, listed))
    mode_sent = lambda settings: sum("collaboration_mode" in f for _, f in sections(thread(spec, [*TWO, {"user": "c", "reply": "d", "set": settings}])[1]))
    assert mode_sent({"personality": "friendly"}) == 1  # not in the list: sent whatever its text
    start = find_variant(spec, "harbor-5", None, None, {}).mode
    assert mode_sent({"mode": start}) == 0  # in the list, same text: left out
    with pytest.raises(SpecError, match="if_different names 'model'"):
        load_spec(edited(tmp_path, old, listed.replace("if_different: [mode]", "if_different: [model]"), "bad"))


def test_joined_roles_send_consecutive_updates_as_one_message(tmp_path):
    split = ("    - changed: [cwd]\n      role: user\n      fragments: [folder_change, agents_md]\n"
             "    - changed: [cwd]\n      role: user\n      fragments: [environment_context]\n")
    steps = [*TWO, {"user": "c", "reply": "d", "set": {"cwd": "/home/dev/harbor"}}]
    apart = load_spec(edited(tmp_path, CWD_ENTRY, split, "apart"))
    joined = load_spec(edited(tmp_path, CWD_ENTRY, split + "  join: [user]\n", "joined"))
    assert [f for r, f in sections(thread(apart, steps)[1]) if r == "user"][:2] == [["folder_change", "agents_md"], ["environment_context"]]
    assert [f for r, f in sections(thread(joined, steps)[1]) if r == "user"][0] == ["folder_change", "agents_md", "environment_context"]


def _switch_thread(spec):
    return thread(spec, [*TWO, {"user": "c", "reply": "d", "set": {"model": "harbor-4-legacy"}}])


def test_a_compaction_caused_by_a_model_switch_takes_its_own_parameters(tmp_path):
    old = "    params: {tools: [], parallel_tool_calls: false}\n"
    spec = load_spec(edited(tmp_path, old, old + "    switch_params: {store: true}\n"))
    comp = next(t for t in _switch_thread(spec) if t.kind == "compaction")
    assert comp.reason.startswith("model switch") and responses_payload(comp.request).get("store") is True
    manual = thread(spec, [*TWO, {"compact": True, "reply": "s"}, {"user": "c", "reply": "d"}])[1]
    assert manual.kind == "compaction" and responses_payload(manual.request).get("store") is not True


def test_a_rebuilt_context_leaves_out_what_leave_out_names_and_takes_later_fragments_with_a_slot(tmp_path):
    old = "    params: {tools: [], parallel_tool_calls: false}\n"
    spec_dir = edited(tmp_path, old, old + "    leave_out: [environment_context]\n")
    (spec_dir / "fragments" / "switch_note.yaml").write_text(
        "description: In a rebuilt context after a switch, the new model's own instructions.\nowner: platform\n"
        "role: user\nlater: true\nslot: environment_context\nstart: <switched>\nend: </switched>\n"
        "text: '{% if thread.previous.model != model.slug %}{{ model_base.text }}{% endif %}'\n", encoding="utf-8")
    spec = load_spec(spec_dir)
    plain = load_spec(TEMPLATES)
    after = next(t for t in _switch_thread(spec) if t.rebuilt)
    names = [s.fragment for m in after.request.messages for s in m.sections]
    assert "environment_context" not in names and "switch_note" in names
    assert "environment_context" in [s.fragment for m in next(t for t in _switch_thread(plain) if t.rebuilt).request.messages
                                     for s in m.sections]
    note = next(s for m in after.request.messages for s in m.sections if s.fragment == "switch_note")
    # The new model's own base instructions, though `base` there is the thread's first (instructions: first).
    assert note.body == thread(spec, TWO, model="harbor-4-legacy")[0].request.base.text != after.request.base.text
    # Never in a first request, nor after a compaction without a switch.
    assert "switch_note" not in [s.fragment for m in thread(spec, TWO)[0].request.messages for s in m.sections]
    manual = thread(spec, [*TWO, {"compact": True, "reply": "s"}, {"user": "c", "reply": "d"}])[-1]
    assert "switch_note" not in [s.fragment for m in manual.request.messages for s in m.sections]


def test_a_script_naming_a_model_the_filter_leaves_out_stops_lock_with_one_line(tmp_path, capsys):
    spec_dir = edited(tmp_path, "models: models.json\n", "models: models.json\nmodel_filter: [harbor-5, harbor-5-mini]\n")
    lock = spec_dir / "prompts.lock.json"
    before = lock.read_bytes() if lock.exists() else None
    code = main(["lock", "--spec", str(spec_dir)])
    out, err = capsys.readouterr()
    assert code == 2 and err.count("\n") == 1, err
    assert "model-switch.yaml" in err and "step 4" in err and "harbor-4-legacy" in err and "model_filter" in err
    assert (lock.read_bytes() if lock.exists() else None) == before  # nothing partial written


def test_switch_params_apply_only_when_the_model_before_the_switch_matches_switch_when(tmp_path):
    old = "    params: {tools: [], parallel_tool_calls: false}\n"

    def stored(when):
        spec = load_spec(edited(tmp_path, old, old + f"    switch_params: {{store: true}}\n    switch_when: {when}\n", when[-12:-1]))
        comp = next(t for t in _switch_thread(spec) if t.kind == "compaction")
        return responses_payload(comp.request).get("store") is True

    # The thread switches from harbor-5 (family harbor-5) to harbor-4-legacy.
    assert stored("{compaction_family: harbor-5}") and not stored("{compaction_family: harbor-4}")


def test_session_base_keeps_the_first_base_instructions_only_for_a_first_model_it_matches(tmp_path):
    def instructions(base):
        spec = load_spec(edited(tmp_path, "\nturns:\n", f"\nturns:\n  session: {{base: {base}}}\n", base[-10:-1]))
        return [responses_payload(t.request)["instructions"] for t in _switch_thread(spec)]

    plain = load_spec(TEMPLATES)
    first = responses_payload(thread(plain, TWO)[0].request)["instructions"]
    legacy = responses_payload(thread(plain, TWO, model="harbor-4-legacy")[0].request)["instructions"]
    assert first != legacy
    kept, followed = instructions("{model: harbor-5}"), instructions("{model: harbor-6}")
    assert kept == [first, first, first]  # the turn, the switch's compaction, the turn after it
    assert followed == [first, first, legacy]


@pytest.mark.parametrize("start,switched,rule,sent", [
    ("harbor-5", "harbor-4-legacy", "first", True), ("harbor-5", "harbor-4-legacy", "both", False),
    ("harbor-4-legacy", "harbor-5", "first", False), ("harbor-4-legacy", "harbor-5", "both", False),
    ("harbor-4-legacy", "harbor-5", None, True)])
def test_a_session_tool_is_decided_by_the_first_model_or_by_both(tmp_path, start, switched, rule, sent):
    # web_search goes to models with a web_search_tool_type: harbor-5 has one, harbor-4-legacy not.
    new = f"\nturns:\n  session: {{tools: {{web_search: {rule}}}}}\n" if rule else "\nturns:\n"
    spec = load_spec(edited(tmp_path, "\nturns:\n", new))
    after = thread(spec, [*TWO, {"user": "c", "reply": "d", "set": {"model": switched}}], model=start)[-1]
    assert after.request.model == switched
    assert any(t.name == "web_search" for t in after.request.tools) is sent


def test_session_slots_render_their_sections_for_the_first_model_after_a_switch(tmp_path):
    def notes(slots):
        spec_dir = edited(tmp_path, "\nturns:\n", f"\nturns:\n  session: {{slots: {slots}}}\n", f"s{len(slots)}")
        (spec_dir / "fragments" / "model_note.yaml").write_text(
            "description: Names the model.\nowner: platform\nrole: user\nslot: environment_context\norder: 9\n"
            "text: 'note for {{ model.slug }}'\n", encoding="utf-8")
        reqs = _switch_thread(load_spec(spec_dir))
        return [s.body for t in (reqs[0], reqs[-1]) for m in t.request.messages for s in m.sections if s.fragment == "model_note"]

    assert notes("[environment_context]") == ["note for harbor-5", "note for harbor-5"]
    assert notes("[]") == ["note for harbor-5", "note for harbor-4-legacy"]


def test_a_session_tool_rule_must_be_first_or_both(tmp_path, capsys):
    spec_dir = edited(tmp_path, "\nturns:\n", "\nturns:\n  session: {tools: {web_search: sometimes}}\n")
    assert main(["render", "--spec", str(spec_dir), "--format", "json"]) == 2
    err = capsys.readouterr().err
    assert "spec.yaml" in err and "sometimes" in err and "first, both" in err
