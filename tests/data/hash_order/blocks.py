import torch.nn as nn


class ABlock(nn.Module):
    def forward(self, x):
        return self.norm(x).float()


class BBlock(nn.Module):
    def forward(self, x):
        return x.float() * 2


class CBlock(nn.Module):
    def forward(self, x):
        return x.float() + 1


class DBlock(nn.Module):
    def forward(self, x):
        return x.float() - 1
