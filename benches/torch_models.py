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


class Rnn(nn.Module):
    """bigru_s, bilstm_m, bilstm_attn_l: Linear+ReLU -> bidirectional GRU/LSTM by mask length
    -> masked mean or attention pooling -> Dropout -> Linear."""

    def __init__(self, dim, outputs, cell="gru", hidden=64, layers=1, attention=False):
        super().__init__()
        self.proj = nn.Linear(dim, hidden)
        kind = {"gru": nn.GRU, "lstm": nn.LSTM}[cell]
        self.rnn = kind(hidden, hidden, num_layers=layers, batch_first=True, bidirectional=True)
        self.attention = nn.Linear(2 * hidden, 1) if attention else None
        self.head = nn.Linear(2 * hidden, outputs)
        self.dropout = nn.Dropout(DROPOUT)

    def forward(self, states, mask):
        x = F.relu(self.proj(states))
        lengths = mask.sum(1)
        packed = pack_padded_sequence(x, lengths.cpu(), batch_first=True, enforce_sorted=False)
        out, _ = pad_packed_sequence(self.rnn(packed)[0], batch_first=True,
                                     total_length=x.shape[1])
        if self.attention is None:
            pooled = masked_mean(out, mask)
        else:
            scores = self.attention(out).squeeze(-1).masked_fill(~mask, float("-inf"))
            pooled = (scores.softmax(1).unsqueeze(-1) * out).sum(1)
        return self.head(self.dropout(pooled))


class ResNet(nn.Module):
    """resnet_*: stem Conv3x3+BN+ReLU, stages of BasicBlocks (stride 2 and a 1x1 conv+BN
    shortcut where the width changes), global average pool -> Linear; torchvision's names."""

    def __init__(self, stages, outputs):
        super().__init__()
        inputs = stages[0][0]
        self.conv1 = nn.Conv2d(IMAGE[0], inputs, 3, 1, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(inputs)
        self.stages = []
        for s, (channels, depth) in enumerate(stages, 1):
            blocks = []
            for _ in range(depth):
                blocks.append(BasicBlock(inputs, channels))
                inputs = channels
            setattr(self, f"layer{s}", nn.Sequential(*blocks))
            self.stages.append(f"layer{s}")
        self.fc = nn.Linear(inputs, outputs)

    def forward(self, x):
        x = F.relu(self.bn1(self.conv1(x)))
        for name in self.stages:
            x = getattr(self, name)(x)
        return self.fc(x.mean((2, 3)))


class BasicBlock(nn.Module):
    def __init__(self, inputs, channels):
        super().__init__()
        stride = 1 if inputs == channels else 2
        self.conv1 = nn.Conv2d(inputs, channels, 3, stride, 1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, 1, 1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.downsample = None
        if inputs != channels:
            self.downsample = nn.Sequential(
                nn.Conv2d(inputs, channels, 1, stride, bias=False), nn.BatchNorm2d(channels))

    def forward(self, x):
        y = self.bn2(self.conv2(F.relu(self.bn1(self.conv1(x)))))
        return F.relu(y + (x if self.downsample is None else self.downsample(x)))


class TextCnn(nn.Module):
    """textcnn_*: per kernel size Conv1d over time + ReLU, max over the windows inside the
    real tokens, concat -> Linear+ReLU+Dropout -> Linear."""

    def __init__(self, dim, filters, kernels, projection, outputs):
        super().__init__()
        self.kernels = kernels
        self.convs = nn.ModuleList(nn.Conv1d(dim, filters, k) for k in kernels)
        self.proj = nn.Linear(filters * len(kernels), projection)
        self.head = nn.Linear(projection, outputs)
        self.dropout = nn.Dropout(DROPOUT)

    def forward(self, states, mask):
        x = states.masked_fill(~mask.unsqueeze(-1), 0.0).transpose(1, 2)
        x = F.pad(x, (0, max(max(self.kernels) - states.shape[1], 0)))
        lengths = mask.sum(1, keepdim=True)
        pooled = []
        for k, conv in zip(self.kernels, self.convs):
            y = F.relu(conv(x))
            inside = torch.arange(y.shape[2]).unsqueeze(0) <= (lengths - k).clamp_min(0)
            pooled.append(y.masked_fill(~inside.unsqueeze(1), float("-inf")).amax(2))
        return self.head(self.dropout(F.relu(self.proj(torch.cat(pooled, 1)))))


class TextTransformer(nn.Module):
    """tx_*: Linear -> post-LN GELU encoder with a key-padding mask -> masked mean -> Linear."""

    def __init__(self, dim_in, dim, heads, layers, feedforward, outputs):
        super().__init__()
        self.proj = nn.Linear(dim_in, dim)
        layer = nn.TransformerEncoderLayer(
            dim, heads, feedforward, DROPOUT, activation="gelu", batch_first=True,
            norm_first=False,
        )
        self.encoder = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = nn.Linear(dim, outputs)

    def forward(self, states, mask):
        x = self.encoder(self.proj(states), src_key_padding_mask=~mask)
        return self.head(masked_mean(x, mask))


def masked_mean(x, mask):
    """Mean of `x [B, T, F]` over the real tokens of `mask [B, T]`."""
    kept = x.masked_fill(~mask.unsqueeze(-1), 0.0)
    return kept.sum(1) / mask.sum(1, keepdim=True, dtype=x.dtype)


class Ffn(nn.Module):
    """ffn_*: masked mean over the real tokens -> Linear+ReLU+Dropout -> Linear."""

    def __init__(self, dim, hidden, outputs):
        super().__init__()
        self.hidden = nn.Linear(dim, hidden)
        self.head = nn.Linear(hidden, outputs)
        self.dropout = nn.Dropout(DROPOUT)

    def forward(self, states, mask):
        return self.head(self.dropout(F.relu(self.hidden(masked_mean(states, mask)))))


class LinearProbe(nn.Module):
    """linear: one Linear on a frozen encoder's pooled embedding."""

    def __init__(self, dim, outputs):
        super().__init__()
        self.head = nn.Linear(dim, outputs)

    def forward(self, embeddings):
        return self.head(embeddings)
