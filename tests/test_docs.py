"""The README keeps what a newcomer needs: the two commands first, every
plugin option, every environment variable the code reads."""

from __future__ import annotations

import re

from _helpers import REPO

README = (REPO / "README.md").read_text(encoding="utf-8")
ENV_READ = re.compile(r"""(?:environ(?:\.get)?\s*[\[(]\s*|getenv\(\s*|setenv\(\s*)["']([A-Z][A-Z0-9_]{3,})["']""")
NOT_OURS = {"HOME", "PATH", "LANG", "LC_ALL", "LC_CTYPE", "PYTHONHASHSEED", "XDG_CACHE_HOME", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL",
            "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "GIT_CONFIG_NOSYSTEM", "GIT_TERMINAL_PROMPT", "GITHUB_OUTPUT", "GITHUB_TOKEN",
            "GITHUB_EVENT_PATH", "GITHUB_STEP_SUMMARY", "GITHUB_API_URL", "GITHUB_ACTIONS", "CI", "NO_COLOR", "TERM",
            "GIT_CEILING_DIRECTORIES", "PYTHONPATH", "TMPDIR",
            "OPENAI_API_KEY", "TIKTOKEN_CACHE_DIR", "CODEX_HOME"}  # other tools' variables, which tests set to show promptspec ignores them


def test_readme_starts_with_the_two_commands() -> None:
    lines = README.splitlines()
    assert lines[0] == "```sh" and lines[1].startswith("python3 dev.py serve") and lines[2].startswith("python3 dev.py test") and lines[3] == "```"


def test_readme_lists_every_plugin_option() -> None:
    from promptspec.site.plugin import PromptspecConfig

    block = README[README.index("  - promptspec:\n      spec:"):]
    block = block[: block.index("```")]
    missing = [name for name in [k for k, _ in PromptspecConfig._schema] if not re.search(rf"(?m)^      {name}:", block)]
    assert not missing, f"README's plugin block lacks {missing}"


def test_every_environment_variable_the_code_reads_is_in_the_readme() -> None:
    read = set()
    for folder in ("generator", "tests", "bench", "action"):
        for path in (REPO / folder).rglob("*.py"):
            read |= set(ENV_READ.findall(path.read_text(encoding="utf-8")))
    read |= set(ENV_READ.findall((REPO / "dev.py").read_text(encoding="utf-8")))
    read |= set(re.findall(r'"([A-Z][A-Z0-9_]{3,})": "', (REPO / "dev.py").read_text(encoding="utf-8")))
    assert "PROMPTSPEC_CACHE_DIR" in read, "the scan finds nothing: the pattern is wrong"
    missing = sorted(v for v in read - NOT_OURS if f"`{v}" not in README)
    assert not missing, f"document these in the README's Environment variables: {missing}"
