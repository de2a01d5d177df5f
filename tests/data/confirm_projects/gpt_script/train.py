"""
Trains a small character-level GPT, in the shape of nanoGPT's train.py: module-level code, defaults
as globals, overridden by configurator.py from a config file and --key=value arguments.

$ python train.py config/train_tiny.py --max_iters=20
"""

import json
import os
import time
from contextlib import nullcontext

import torch

from model import GPT, GPTConfig

# -----------------------------------------------------------------------------
# default config values
out_dir = "out"
eval_interval = 2000
log_interval = 1
eval_iters = 200
dataset = "openwebtext"
gradient_accumulation_steps = 2
batch_size = 12
block_size = 1024
n_layer = 12
n_head = 12
n_embd = 768
dropout = 0.0
bias = False
learning_rate = 6e-4
max_iters = 600000
weight_decay = 1e-1
beta1 = 0.9
beta2 = 0.95
grad_clip = 1.0
device = "cuda"
dtype = "bfloat16"
compile = True
probe_sensitivity = False  # after training: how the last hidden state moves along a direction of the inputs
# -----------------------------------------------------------------------------
config_keys = [k for k, v in globals().items() if not k.startswith("_") and isinstance(v, (int, float, bool, str))]
exec(open("configurator.py").read())  # overrides from command line or config file
config = {k: globals()[k] for k in config_keys}
# -----------------------------------------------------------------------------

torch.manual_seed(1337)
device_type = "cuda" if "cuda" in device else "cpu"
ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
ctx = nullcontext() if dtype == "float32" else torch.amp.autocast(device_type=device_type, dtype=ptdtype)

# poor man's data loader: a file of uint8 token ids per split
data_dir = os.path.join("data", dataset)


def get_batch(split):
    with open(os.path.join(data_dir, f"{split}.bin"), "rb") as f:
        data = torch.frombuffer(bytearray(f.read()), dtype=torch.uint8)
    ix = torch.randint(len(data) - block_size, (batch_size,))
    x = torch.stack([data[i : i + block_size].long() for i in ix])
    y = torch.stack([data[i + 1 : i + 1 + block_size].long() for i in ix])
    return x.to(device), y.to(device)


with open(os.path.join(data_dir, "meta.json")) as f:
    meta_vocab_size = json.load(f)["vocab_size"]

model_args = dict(
    n_layer=n_layer,
    n_head=n_head,
    n_embd=n_embd,
    block_size=block_size,
    bias=bias,
    vocab_size=meta_vocab_size,
    dropout=dropout,
)
model = GPT(GPTConfig(**model_args))
model.to(device)
scaler = torch.amp.GradScaler(device_type, enabled=(dtype == "float16"))
optimizer = model.configure_optimizers(weight_decay, learning_rate, (beta1, beta2))
raw_model = model
if compile:
    print("compiling the model...")
    model = torch.compile(model)


@torch.no_grad()
def estimate_loss():
    out = {}
    model.eval()
    for split in ["train", "val"]:
        losses = torch.zeros(eval_iters)
        for k in range(eval_iters):
            X, Y = get_batch(split)
            with ctx:
                logits, loss = model(X, Y)
            losses[k] = loss.item()
        out[split] = losses.mean()
    model.train()
    return out


X, Y = get_batch("train")
t0 = time.time()
iter_num = 0
while True:
    if iter_num % eval_interval == 0 and iter_num > 0:
        losses = estimate_loss()
        print(f"step {iter_num}: train loss {losses['train']:.4f}, val loss {losses['val']:.4f}")
    for micro_step in range(gradient_accumulation_steps):
        with ctx:
            logits, loss = model(X, Y)
            loss = loss / gradient_accumulation_steps
        X, Y = get_batch("train")
        scaler.scale(loss).backward()  # expect: CAL002
    if grad_clip != 0.0:
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), grad_clip)
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    t1 = time.time()
    if iter_num % log_interval == 0:
        print(f"iter {iter_num}: loss {loss.item() * gradient_accumulation_steps:.4f}, time {(t1 - t0) * 1000:.2f}ms")
    t0 = t1
    iter_num += 1
    if iter_num > max_iters:
        break


def sensitivity(embeddings):
    """How much the last hidden state moves along a random direction of the input embeddings."""
    import torch.autograd.forward_ad as fwAD

    hidden = torch.compile(raw_model.forward_hidden)
    direction = torch.randn_like(embeddings)
    with fwAD.dual_level():
        out = hidden(fwAD.make_dual(embeddings, direction))  # expect: CAL001
        return fwAD.unpack_dual(out).tangent


if probe_sensitivity:
    X, _ = get_batch("val")
    with torch.no_grad():
        tangent = sensitivity(raw_model.embed(X))
    print("sensitivity", None if tangent is None else tangent.norm().item())
