"""GitHub Markdown that spec text cannot bring to life: the one escaper every
writer for GitHub uses (diff, history and compare reports, `verify --format
markdown`, the job summary and the pull-request comment), and the check the
comment script runs on a report it did not write.

GitHub renders a comment with cmark-gfm and only *then* looks for `@user`,
`@org/team`, `#123`, `GH-123` and `:emoji:` in the text nodes, and GFM's
extended autolinks turn `www.x.example`, `https://…` and `a@b.example` into
links.  A numeric entity is decoded before those filters run, so `&#64;` alone
still mentions; a zero-width space (written `&#8203;`, so the Markdown source
stays plain ASCII) after the `@`, `#` or `:`, and inside `www.` and `GH-`,
breaks every one of them while the reader sees the same text.  Punctuation
that Markdown or HTML would act on (emphasis, links, images, tables, raw HTML)
becomes a numeric entity, and invisible characters become visible escapes
(`errors.reveal_invisible`).  Long text goes into a fence longer than any
backtick run in it, where nothing is live.

`live_elements` is the other side: given Markdown from elsewhere (an artifact
of an untrusted run), it lists what would be live when GitHub renders it.
Everything this module writes passes it; the comment script posts a report
as Markdown only when the list is empty, and as inert text otherwise.

Standard library and `errors` only: `action/comment.py` imports it from the
action's own checkout without installing anything.
"""

from __future__ import annotations

import html
import re

from ..errors import INVISIBLE, reveal_invisible

_SPECIAL = set("\\`*_{}[]<>()!|~&\"'$#@:=")
_ZWSP = "&#8203;"
# A reference, mention, emoji, scheme or `www.`/`GH-` autolink needs a word
# character right after these; the zero-width space goes in between.
_BREAK = re.compile(r"(&#64;|&#35;|&#58;)(?=[\w+/-])|(?i:\b(www)(?=\.)|\b(gh)(?=-\d))")


def md_escape(text: object) -> str:
    """Spec text as one line of inert GitHub Markdown (see the module docstring)."""
    text = reveal_invisible(" ".join(str(text).split()))
    out = "".join(f"&#{ord(c)};" if c in _SPECIAL else c for c in text)
    return _BREAK.sub(lambda m: (m.group(1) or m.group(2) or m.group(3)) + _ZWSP, out)


def md_code(text: object) -> str:
    return f"<code>{md_escape(text)}</code>"


def fence_for(content: str) -> str:
    """A backtick fence longer than any backtick run in `content` (min 3), so the text cannot close it."""
    longest = max((len(m) for m in re.findall(r"`+", content)), default=0)
    return "`" * max(3, longest + 1)


def fenced(content: str, info: str = "diff") -> str:
    """`content` as a fenced block nothing inside can close, invisible characters shown."""
    content = reveal_invisible(content)
    fence = fence_for(content)
    body = content if content.endswith("\n") else content + "\n"
    return f"{fence}{info}\n{body}{fence}\n"


# ---------------------------------------------------------------------------
# Checking Markdown written elsewhere

ALLOWED_TAGS = frozenset({"code", "details", "summary", "del", "ins", "br", "b", "strong", "em", "sub", "sup"})
"""The HTML the reports use; any other tag (an image, a link, a comment that hides the rest) is live."""

ALLOWED_EMOJI = frozenset({"warning", "scissors"})
"""The emoji shortcodes promptspec's own reports write."""

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_TAG = re.compile(r"<(/?)([A-Za-z][A-Za-z0-9-]*)((?:\s[^<>]*)?)/?>|<[!?/]|<(?=[A-Za-z])")
_LIVE_TEXT = (
    ("a mention", re.compile(r"@[A-Za-z0-9_]")),
    ("a reference", re.compile(r"#[0-9]|\bGH-[0-9]", re.I)),
    ("an autolink", re.compile(r"\b(?:https?|ftp)://|\b(?:mailto|xmpp):[\w.+-]|\bwww\.|[\w.+-]@[\w-]", re.I)),
)
"""Found in the rendered text (entities decoded), where GitHub's filters look."""
_LINK = re.compile(r"\]\(|\]\[|!\[|^ {0,3}\[[^\]]*\]:", re.M)
"""Link and image syntax, found in the source (an entity-escaped bracket is text)."""
_EMOJI = re.compile(r":([a-z0-9_+-]+):")


def live_elements(markdown: str) -> list[str]:
    """What GitHub would make live in `markdown` outside fenced code: mentions,
    references, emoji other than ours, autolinks, links, images, HTML other
    than ALLOWED_TAGS, an unclosed fence, invisible characters.  Empty: the
    text is as inert as what md_escape and fenced write."""
    found: list[str] = []
    if re.search(f"[{INVISIBLE}]", markdown):
        found.append("invisible characters")
    outside: list[str] = []
    fence: tuple[str, int] | None = None
    for line in markdown.split("\n"):
        m = _FENCE.match(line)
        if fence is None:
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                fence = (m.group(1)[0], len(m.group(1)))
            else:
                outside.append(line)
        elif m and m.group(1)[0] == fence[0] and len(m.group(1)) >= fence[1] and not m.group(2).strip():
            fence = None
    if fence is not None:
        found.append("a fence that is never closed")
    raw = "\n".join(outside)
    for tag in _TAG.finditer(raw):
        name = (tag.group(2) or "").lower()
        if name not in ALLOWED_TAGS or (tag.group(3) or "").strip() not in ("", "open"):
            found.append(f"HTML {tag.group()[:40]!r}")
            break
    if _LINK.search(raw):
        found.append(f"a link or an image ({_LINK.search(raw).group()!r})")
    text = html.unescape(raw)
    for what, pattern in _LIVE_TEXT:
        hit = pattern.search(text)
        if hit:
            found.append(f"{what} ({hit.group()!r})")
    emoji = sorted({e for e in _EMOJI.findall(text) if e not in ALLOWED_EMOJI})
    if emoji:
        found.append(f"emoji :{emoji[0]}:")
    return found


__all__ = ["ALLOWED_EMOJI", "ALLOWED_TAGS", "fence_for", "fenced", "live_elements", "md_code", "md_escape"]
