"""Print the model FLOP utilization of a flavor at a given throughput."""

import sys

from forge.models.common.utils import count_parameters
from forge.protocols.train_spec import get_train_spec
from forge.utils.flops import mfu

if __name__ == "__main__":
    spec = get_train_spec(sys.argv[1])
    args = spec.flavors[sys.argv[2]]
    model = spec.model_cls(args)
    print(mfu(count_parameters(model), args.n_layers, args.dim, 2048, float(sys.argv[3])))
