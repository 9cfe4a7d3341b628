"""The real agent as the fidelity oracle: run a released Codex CLI offline and
record what it sends.

`binary` finds the native executable of an npm install and reads its release;
`scratch` builds the throw-away world it runs in (sentinel HOME, cwd, time zone,
no caller environment); `recorder` is the loopback stand-in for the Responses
API; `appserver` speaks JSON-RPC to `codex app-server`; `capture` drives one
app-server through many configurations; `pool/` spreads captures over several
scratch worlds at once, keeps them across runs and takes a release's harvest; `parts` cuts a request into named
parts and turns sentinels back into placeholders; `compare` finds the first
differing part; `machine` sees a spec's variants as Codex configurations.

Used by `importers.codex_cli` (which learns a spec from the captures) and by
`verify` (which compares a spec with them). May import `assemble` and below.
"""

from .binary import CodexBinary, CodexError, identify
from .capture import AXES, Capture, Config, Harvest
from .pool.harvest import harvest
from .compare import Outcome, compare

__all__ = ["AXES", "Capture", "CodexBinary", "CodexError", "Config", "Harvest", "Outcome", "compare", "harvest",
           "identify"]
