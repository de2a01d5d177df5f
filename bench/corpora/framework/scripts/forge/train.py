"""Launch training: python scripts/forge/train.py --model.name llama"""

import sys

from forge.train.launcher import main

if __name__ == "__main__":
    main(sys.argv[1:])
