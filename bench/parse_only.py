"""Reference pass for the benchmark: ``libcst.parse_module`` on every file, nothing else.

Usage: ``python bench/parse_only.py FILE_LIST [--procs N]`` where FILE_LIST holds one path a line.
Prints one JSON object: files, parsed, failures, seconds. Run it in its own process (the benchmark
does) so that its CPU time and memory are measured the same way as the linters'.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from multiprocessing import Pool


def _parse(path: str) -> bool:
    import libcst

    try:
        with open(path, "rb") as handle:
            source = handle.read()
        libcst.parse_module(source)  # bytes: LibCST detects the encoding itself
    except Exception:
        return False
    return True


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("file_list")
    parser.add_argument("--procs", type=int, default=1)
    args = parser.parse_args(argv)
    with open(args.file_list, encoding="utf-8") as handle:
        paths = [line.rstrip("\n") for line in handle if line.strip()]
    started = time.perf_counter()
    if args.procs <= 1:
        results = [_parse(p) for p in paths]
    else:
        with Pool(args.procs) as pool:
            results = list(pool.imap_unordered(_parse, paths, chunksize=max(1, len(paths) // (args.procs * 16))))
    ok = sum(results)
    summary = {
        "files": len(paths),
        "parsed": ok,
        "failures": len(paths) - ok,
        "seconds": round(time.perf_counter() - started, 3),
    }
    json.dump(summary, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
