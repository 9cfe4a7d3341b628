"""Base instructions: which text a variant's model and personality give.

Kept apart from the request builder because the rule is the part agents
change most between releases (which variable an unset personality fills,
whether `none` empties a placeholder or removes a section).
"""

from __future__ import annotations

from ..spec.model import Model, Spec
from ..spec.provenance import field_ref, ordered
from .request import BaseInstructions

PERSONALITY_PLACEHOLDER = "{{ personality }}"


def base_instructions(spec: Spec, model: Model, personality: str) -> BaseInstructions:
    """`_base_instructions`, with the provenance of its text: the override file,
    or the models.json fields (template, the personality variable) and the
    personality's spec.yaml entry when it decides what is filled or cut."""
    base = _base_instructions(spec, model, personality)
    if base.rule == "override":
        assert spec.instructions_override is not None  # the rule says so
        text, path = spec.fs.read_text(spec.instructions_override)  # cached: the read above
        return BaseInstructions(base.text, base.rule, base.detail, base.source, (spec.fs.source_ref(path, text),))
    where = spec.models_file
    if base.rule == "base_instructions":
        refs = [field_ref(where, f"{model.slug}.base_instructions", model.base_instructions, model.line)]
    else:
        refs = [field_ref(where, f"{model.slug}.model_messages.instructions_template", model.instructions_template, model.line)]
        variable = base.detail.split(" ", 1)[0]
        if variable in model.instructions_variables and PERSONALITY_PLACEHOLDER in (model.instructions_template or ""):
            refs.append(field_ref(where, f"{model.slug}.model_messages.instructions_variables.{variable}",
                                  model.instructions_variables[variable], model.line))
        choice = next((p for p in spec.personalities if p.name == personality), None)
        if choice is not None and (getattr(choice, "fills", None) is not None or getattr(choice, "removes_section", None)):
            refs.append(field_ref("spec.yaml", f"personalities.{choice.name}", [choice.fills, choice.removes_section], choice.line))
    return BaseInstructions(base.text, base.rule, base.detail, base.source, ordered(refs))


def _base_instructions(spec: Spec, model: Model, personality: str) -> BaseInstructions:
    """Codex's rule: an override wins; else the model's template with the
    personality filled in by plain replacement (the variable the personality
    `fills`, else the one of its name), or, for templates without the
    placeholder, the section the personality `removes_section` cut out; else
    `base_instructions`."""
    if spec.instructions_override:
        text, path = spec.fs.read_text(spec.instructions_override)
        shown = spec.fs.display(path)
        return BaseInstructions(text, "override", shown, shown)
    template = model.instructions_template
    choice = next((p for p in spec.personalities if p.name == personality), None)
    source = f"{spec.models_file}#{model.slug}.model_messages.instructions_template"
    if template is not None and PERSONALITY_PLACEHOLDER not in template and choice is not None and choice.removes_section:
        return BaseInstructions(remove_section(template, choice.removes_section), "template",
                                f"without section {choice.removes_section!r}", source)
    if template is not None and PERSONALITY_PLACEHOLDER not in template and choice is not None and choice.fills is not None:
        return BaseInstructions(template, "template", "no {{ personality }} placeholder to fill", source)
    if template is not None and choice is not None and choice.fills is not None:
        key = f"personality_{choice.fills}" if choice.fills else "empty"
        value = model.instructions_variables.get(key) if choice.fills else ""
        if value is None and choice.fills and key not in model.instructions_variables:
            key += " (not defined: empty)"
        return BaseInstructions(template.replace(PERSONALITY_PLACEHOLDER, value or ""), "template", key, source)
    if template is not None:
        if personality == "none":
            key, value = "none", ""
        else:
            key = f"personality_{personality}"
            value = model.instructions_variables.get(key)
            if value is None and key not in model.instructions_variables:
                if personality == "default":
                    value = ""
                else:
                    key += " (not defined: empty)"
            value = value or ""
        return BaseInstructions(
            template.replace(PERSONALITY_PLACEHOLDER, value),
            "template",
            key,
            f"{spec.models_file}#{model.slug}.model_messages.instructions_template",
        )
    assert model.base_instructions is not None  # the loader guarantees one of the two
    return BaseInstructions(
        model.base_instructions, "base_instructions", "", f"{spec.models_file}#{model.slug}.base_instructions"
    )


def remove_section(text: str, heading: str) -> str:
    """The text without the section that starts at the line `heading` and runs
    to the next heading of the same level (or the end); unchanged when absent."""
    level = heading.split(" ", 1)[0] + " "
    if text.startswith(heading + "\n"):
        start = 0
    else:
        start = text.find("\n" + heading + "\n")
        if start < 0:
            return text
        start += 1
    nxt = text.find("\n" + level, start + len(heading))
    end = len(text) if nxt < 0 else nxt + 1
    return text[:start] + text[end:]
