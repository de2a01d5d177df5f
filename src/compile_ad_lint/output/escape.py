"""The one escaping step every human-facing adapter applies to text that can come from checked code.

Finding messages quote the code they flag: autocast device strings, backend names, config values,
function names, file names. A string literal such as ``"cpu\\nfake.py:1:1: CAL000 forged"`` or one
holding ``"\\x1b[2J"`` would otherwise forge a report line (in text, flake8 or GitHub output) or
drive the reader's terminal. ``printable`` writes such characters the way ``repr`` does, so the
report shows what the source spells and nothing more.
"""

from __future__ import annotations


def printable(text: str) -> str:
    """``text`` with every character ``repr`` would escape written as ``\\n``, ``\\x1b``, ``\\u202e``.

    That covers C0 and C1 controls, DEL, line and paragraph separators, the bidi embeddings,
    overrides and isolates (U+202A-U+202E, U+2066-U+2069, which reorder what a reader sees),
    other invisible format characters, and the lone surrogates that stand for undecodable bytes
    in file names (which would not even encode to UTF-8 on the way out). Backslashes and quotes stay
    as they are: messages already hold ``repr``-quoted values and Windows paths, and doubling their
    backslashes would garble them; the goal is that nothing is interpreted, not a reversible form.
    """
    return text if text.isprintable() else "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
