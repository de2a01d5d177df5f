"""``compile-ad-lint lsp``: a Language Server Protocol server on stdio (needs ``pygls``).

A thin adapter over ``Analyzer``. It analyzes the open documents of a project together, with the
unsaved contents of every open buffer passed as ``sources``, so that a change in one file updates
the diagnostics of the files that depend on it. It never runs user code (the analysis is static)
and never writes the user's files; like the CLI and flake8 it reads and writes the project's
``.compile_ad_lint_cache/``, so a first open after ``compile-ad-lint check`` is served from it, and
it keeps decoded entries in memory between edits.

Lines: LSP ends a line only at ``\\n``, ``\\r\\n`` and ``\\r``, and so does CPython's tokenizer, which
numbers the lines of our findings. Python's ``str.splitlines`` (used by pygls's ``TextDocument``)
also splits at form feeds, ``\\x1c``-``\\x1e``, U+0085, U+2028 and U+2029, which would shift every
line after such a character. All line bookkeeping here goes through ``LineTable`` instead: documents
(``Document``) apply incremental edits, and diagnostics and quick fixes are placed, with it.

Positions: findings carry 1-based lines and columns with an exclusive end column, counted in
characters; LSP wants 0-based lines and columns in the client's position encoding (UTF-16 unless
negotiated otherwise). ``lsp_range`` is the one place that converts between the two.

Scheduling: ``didChange`` schedules an analysis per document after ``debounce`` seconds; another
change to the same document restarts its timer. ``didOpen`` and ``didSave`` analyze at once. Each
open buffer carries a stamp that changes whenever its text may have (open, change, close); an
analysis whose buffers were re-stamped before it started is skipped, one re-stamped while it ran is
dropped: a newer analysis of the same project is then due, and only it publishes.

Two passes: the analysis a change starts checks the open documents' own entry points (what the
buffers reach; fast enough to follow typing), and once the buffers have stayed as analyzed for
``IDLE_SECONDS`` a second pass checks the whole project with the same buffers, so that every
entry point whose dependencies include an edited buffer runs again: a finding in an open file that
another file's entry point reaches (an experiment script driving the trainer) then reads as the
CLI's does. Roots whose dependencies did not change are served from the cache; the pass gives way
(between roots) to the next edit, and publishes only the documents whose diagnostics changed. A
client that supports ``window/workDoneProgress`` sees it as a progress ("Checking the project").
Before the idle wait, the first pass's walks are rehearsed (``_rehearse``) while some could not be
replayed, so that the next edit replays the code it does not change; the rehearsal after an open
shows as a progress ("Indexing the open files") and gives way to the next analysis once that is
due, one after an edit stops at the next edit.

Code actions: for each diagnostic, its fixes as quick fixes (the preferred one first; a
``WorkspaceEdit`` that may change other files too, e.g. a CAL002 fix at a compiled call in another
module), then the ``# noqa`` suppression; and ``source.fixAll.compile-ad-lint``, every safe fix of the
document at once. Fixes are resolved (``fixes.resolve``) when the analysis runs, against the buffers
it saw, and offered only while every file they edit still holds that content.

Process: ``exit`` ends the process at once (0 after ``shutdown``, 1 without, as the specification
says), even while an analysis runs; ``FramedInput`` keeps malformed framing from making the server
deaf or exhausting memory.

The package, one module per concern: ``server`` (``CompileAdLintServer``: events, scheduling,
analyses, publishing; ``start``), ``documents`` (open documents, snapshots, the files a publish
reads), ``positions`` (``LineTable``, ``lsp_range``), ``actions`` (diagnostics, quick fixes, fix
all), ``transport`` (``FramedInput``: stdio framing) and ``heap`` (the garbage collector's pauses).
"""

from .actions import FIX_ALL_KIND, SOURCE, noqa_edit
from .documents import Files
from .heap import collector_paused
from .positions import LineTable, lsp_range
from .server import DEFAULT_DEBOUNCE_SECONDS, IDLE_SECONDS, CompileAdLintServer, start
from .transport import MAX_MESSAGE_BYTES, FramedInput

__all__ = [
    "DEFAULT_DEBOUNCE_SECONDS",
    "FIX_ALL_KIND",
    "IDLE_SECONDS",
    "MAX_MESSAGE_BYTES",
    "SOURCE",
    "CompileAdLintServer",
    "Files",
    "FramedInput",
    "LineTable",
    "collector_paused",
    "lsp_range",
    "noqa_edit",
    "start",
]
