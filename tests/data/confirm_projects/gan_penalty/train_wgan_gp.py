"""WGAN-GP on a 2-D toy distribution (the shape of the gradient-penalty training loops in GAN repos).

    python train_wgan_gp.py --steps 2000 --penalty 10
"""

import argparse
import math

import torch
import torch.nn as nn


def ring(n, generator):
    angle = torch.rand(n, generator=generator) * 2 * math.pi
    return torch.stack([angle.cos(), angle.sin()], dim=1) + 0.05 * torch.randn(n, 2, generator=generator)


class Critic(nn.Module):
    def __init__(self, width=64):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, width), nn.SiLU(), nn.Linear(width, width), nn.SiLU(), nn.Linear(width, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--penalty", type=float, default=10.0)
    args = parser.parse_args()
    generator = torch.Generator().manual_seed(0)
    torch.manual_seed(0)
    critic = torch.compile(Critic())
    make = nn.Sequential(nn.Linear(8, 64), nn.SiLU(), nn.Linear(64, 2))
    c_opt = torch.optim.Adam(critic.parameters(), lr=1e-4, betas=(0.5, 0.9))
    g_opt = torch.optim.Adam(make.parameters(), lr=1e-4, betas=(0.5, 0.9))
    for step in range(args.steps):
        real = ring(args.batch_size, generator)
        fake = make(torch.randn(args.batch_size, 8)).detach()
        alpha = torch.rand(args.batch_size, 1)
        mixed = (alpha * real + (1 - alpha) * fake).requires_grad_(True)
        scores = critic(mixed)
        (grad,) = torch.autograd.grad(scores.sum(), mixed, create_graph=True)  # expect: CAL004
        penalty = ((grad.norm(2, dim=1) - 1) ** 2).mean()
        loss = critic(fake).mean() - critic(real).mean() + args.penalty * penalty
        c_opt.zero_grad()
        loss.backward()
        c_opt.step()
        g_loss = -critic(make(torch.randn(args.batch_size, 8))).mean()
        g_opt.zero_grad()
        g_loss.backward()
        g_opt.step()
        if step % 100 == 0:
            print(f"step {step}: critic {loss.item():.4f}, generator {g_loss.item():.4f}")


if __name__ == "__main__":
    main()
