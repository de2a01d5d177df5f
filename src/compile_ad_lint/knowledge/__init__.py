"""What torch and the training frameworks do, as declarative tables: data, not if-chains in the
interpreter, so that each fact sits in one row next to where it was read.

Each row names the torch or framework source it was read from and has a test
(``tests/knowledge/test_knowledge.py``, ``tests/linking/test_reach.py``, ``tests/knowledge/test_frameworks.py``). The package
imports nothing else of compile-ad-lint, so summaries (``summary/``) and the interpreter
(``linking/``) can both read it without summaries depending on the interpreter. A new spelling of a
known API is a row here plus its test; only a new kind of effect needs interpreter code.
"""
