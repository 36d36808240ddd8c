"""What `transformers` back-propagates through the small random text encoders of
tests/fixtures/text-encoders/ (made by scripts/text_encoder_fixtures.py), so that
fine-tuning in drift (src/models/fine_tuned.rs) is checked against it: the gradient of
every parameter, not only the forward pass (read by tests/fine_tuning.rs).

Run through scripts/make-fixtures with the `encoder-peer` set of scripts/pins. For each
architecture folder it loads the model as a user's folder is read (`AutoModel`, eval mode:
no dropout, so the result is deterministic), runs the texts of `reference.safetensors`
(its `ids` and `lengths`, padded with the model's padding id, with an attention mask),
pools the last hidden states by the masked mean, and takes the loss
`sum(mean * weights)` for fixed random `weights` `[texts, hidden]` (seeded). It writes
`gradients.safetensors` beside the model: `weights`, `loss` and `grad.<name>` for every
parameter the loss reaches, under the hub's names (`embeddings.word_embeddings.weight`);
parameters it does not reach (a pooler) have none.

It also writes `tests/fixtures/warmup_schedule.json`: the learning rate of every step of
`transformers`' `get_linear_schedule_with_warmup` (warm-up steps `ceil(warmup * steps)`,
as the `Trainer` counts them from `warmup_ratio`) for a few step counts and warm-up
fractions, as an optimiser reads it at each step.
"""

import json
import math
import os
import sys

import torch
import transformers
from safetensors.torch import load_file, save_file


def gradients(folder):
    model = transformers.AutoModel.from_pretrained(folder).eval()
    reference = load_file(os.path.join(folder, "reference.safetensors"))
    lengths = reference["lengths"]
    width = int(lengths.max())
    pad = model.config.pad_token_id
    ids = reference["ids"][:, :width].clone()
    mask = torch.arange(width).unsqueeze(0) < lengths.unsqueeze(1)
    ids[~mask] = pad
    states = model(input_ids=ids, attention_mask=mask.long()).last_hidden_state
    real = mask.unsqueeze(-1).to(states.dtype)
    mean = (states * real).sum(1) / real.sum(1).clamp(min=1e-9)
    weights = torch.randn(mean.shape, generator=torch.Generator().manual_seed(2))
    loss = (mean * weights).sum()
    loss.backward()
    out = {"weights": weights, "loss": loss.detach().reshape(1)}
    for name, p in model.named_parameters():
        if p.grad is not None:
            out[f"grad.{name}"] = p.grad.contiguous()
    save_file(out, os.path.join(folder, "gradients.safetensors"))


def schedules(path):
    cases = []
    for steps in [1, 2, 7, 10, 33]:
        for warmup in [0.0, 0.1, 0.25, 0.5, 0.99]:
            param = torch.nn.Parameter(torch.zeros(1))
            opt = torch.optim.AdamW([param], lr=2e-5)
            sched = transformers.get_linear_schedule_with_warmup(
                opt, math.ceil(warmup * steps), steps
            )
            rates = []
            for _ in range(steps):
                rates.append(opt.param_groups[0]["lr"])
                opt.step()
                sched.step()
            cases.append({"steps": steps, "warmup": warmup, "peak": 2e-5, "rates": rates})
    with open(path, "w") as f:
        json.dump({"transformers": transformers.__version__, "cases": cases}, f, indent=1)
        f.write("\n")


def main():
    torch.set_num_threads(1)
    root = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/text-encoders"
    for name in sorted(os.listdir(root)):
        folder = os.path.join(root, name)
        if os.path.isdir(folder):
            gradients(folder)
    schedules(os.path.join(os.path.dirname(os.path.abspath(root)), "warmup_schedule.json"))


if __name__ == "__main__":
    main()
