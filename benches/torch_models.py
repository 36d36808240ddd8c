"""The PyTorch twins of drift's models (src/models), as a PyTorch user writes them: the same
layers, sizes, dropout and initial-weight names (so drift's exported weights load with
`load_state_dict`). The benches that compare drift with PyTorch import them:
benches/train_step.py (one training step) and benches/pipeline.py (a whole run).
"""

import torch
import torch.nn.functional as F
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

IMAGE = (3, 32, 32)
DROPOUT = 0.1


class Mlp(nn.Module):
    """mlp_*: flatten -> (Linear+ReLU) per hidden width -> Linear."""

    def __init__(self, hidden, outputs):
        super().__init__()
        widths = [IMAGE[0] * IMAGE[1] * IMAGE[2], *hidden]
        self.layers = nn.ModuleList(nn.Linear(a, b) for a, b in zip(widths, widths[1:]))
        self.head = nn.Linear(widths[-1], outputs)

    def forward(self, x):
        x = x.flatten(1)
        for layer in self.layers:
            x = F.relu(layer(x))
        return self.head(x)


class Cnn(nn.Module):
    """cnn_*: per block Conv3x3(pad 1)+BN+ReLU+MaxPool2, global average pool -> Linear."""

    def __init__(self, channels, outputs):
        super().__init__()
        widths = [IMAGE[0], *channels]
        self.blocks = nn.ModuleList(
            nn.ModuleDict({"conv": nn.Conv2d(a, b, 3, padding=1), "bn": nn.BatchNorm2d(b)})
            for a, b in zip(widths, widths[1:])
        )
        self.head = nn.Linear(widths[-1], outputs)

    def forward(self, x):
        for block in self.blocks:
            x = F.max_pool2d(F.relu(block["bn"](block["conv"](x))), 2)
        return self.head(x.mean((2, 3)))


class Vit(nn.Module):
    """vit_*: patch 4 + CLS + learned positions, post-LN GELU encoder, LayerNorm(CLS) -> Linear."""

    def __init__(self, dim, layers, heads, mlp_ratio, outputs, patch=4):
        super().__init__()
        channels, height, width = IMAGE
        tokens = (height // patch) * (width // patch) + 1
        self.patch_embed = nn.Conv2d(channels, dim, patch, stride=patch)
        self.cls_token = nn.Parameter(torch.randn(1, 1, dim) * 0.02)
        self.pos_embed = nn.Parameter(torch.randn(1, tokens, dim) * 0.02)
        layer = nn.TransformerEncoderLayer(
            dim, heads, round(mlp_ratio * dim), DROPOUT, activation="gelu",
            batch_first=True, norm_first=False,
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(dim)
        self.head = nn.Linear(dim, outputs)

    def forward(self, x):
        patches = self.patch_embed(x).flatten(2).transpose(1, 2)
        cls = self.cls_token.expand(patches.shape[0], -1, -1)
        x = self.encoder(torch.cat([cls, patches], 1) + self.pos_embed)
        return self.head(self.norm(x[:, 0]))


class BiGru(nn.Module):
    """bigru_s: Linear+ReLU -> BiGRU by mask length -> masked mean -> Dropout -> Linear."""

    def __init__(self, dim, outputs, hidden=64):
        super().__init__()
        self.proj = nn.Linear(dim, hidden)
        self.rnn = nn.GRU(hidden, hidden, batch_first=True, bidirectional=True)
        self.head = nn.Linear(2 * hidden, outputs)
        self.dropout = nn.Dropout(DROPOUT)

    def forward(self, states, mask):
        x = F.relu(self.proj(states))
        lengths = mask.sum(1)
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = pad_packed_sequence(self.rnn(packed)[0], batch_first=True,
                                     total_length=x.shape[1])
        kept = out.masked_fill(~mask.unsqueeze(-1), 0.0)
        pooled = kept.sum(1) / mask.sum(1, keepdim=True, dtype=out.dtype)
        return self.head(self.dropout(pooled))


class Ffn(nn.Module):
    """ffn_*: masked mean over the real tokens -> Linear+ReLU+Dropout -> Linear."""

    def __init__(self, dim, hidden, outputs):
        super().__init__()
        self.hidden = nn.Linear(dim, hidden)
        self.head = nn.Linear(hidden, outputs)
        self.dropout = nn.Dropout(DROPOUT)

    def forward(self, states, mask):
        kept = states.masked_fill(~mask.unsqueeze(-1), 0.0)
        pooled = kept.sum(1) / mask.sum(1, keepdim=True, dtype=states.dtype)
        return self.head(self.dropout(F.relu(self.hidden(pooled))))


class LinearProbe(nn.Module):
    """linear: one Linear on a frozen encoder's pooled embedding."""

    def __init__(self, dim, outputs):
        super().__init__()
        self.head = nn.Linear(dim, outputs)

    def forward(self, embeddings):
        return self.head(embeddings)
