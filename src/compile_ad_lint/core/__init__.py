"""The data model every layer shares; it imports nothing else of the package.

- ``locations``: ``Location`` (1-based, end exclusive), the statement a call runs in, related locations.
- ``findings``: ``Finding``, its severity, typed ``Evidence``, ``Fix`` and its edits, confirm verdicts.
- ``plans``: what a fix changes, as data (``fixes/`` carries plans out on the text).
- ``settings``: ``Config``, the settings of a check, and what a code selection means.
- ``codes``: the rule codes, as data.
- ``torch_versions``: torch versions, series and the target a check speaks for.
- ``paths``: from a path as shown to the file it names.
- ``collector``: the garbage collector paused, one count for the process.
"""
