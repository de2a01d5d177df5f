# A character-level model small enough for a CPU smoke run.
out_dir = "out-tiny"
dataset = "tiny_chars"
eval_interval = 250
eval_iters = 2
batch_size = 4
block_size = 16
n_layer = 2
n_head = 2
n_embd = 32
max_iters = 2000
device = "cpu"
dtype = "bfloat16"
