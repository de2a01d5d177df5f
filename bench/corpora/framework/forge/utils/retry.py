"""forge: retries for flaky storage.

Module utils/retry.py.
"""

import time


def retry(fn, attempts=3, delay=1.0):
    for attempt in range(attempts):
        try:
            return fn()
        except OSError:
            if attempt == attempts - 1:
                raise
            time.sleep(delay * (attempt + 1))
