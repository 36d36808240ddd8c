"""Random text encoders at their base sizes, for benches/encode.rs: one Hugging Face hub
folder per architecture drift reads, built with `transformers` (seeded, untrained), with
the small tokenizer of the architecture's parity fixture (tests/fixtures/text-encoders/):
what a forward pass costs depends on the widths, depths and sequence lengths, not on the
weights or the size of the vocabulary.

    python base_encoders.py ARCHITECTURE OUT_DIR

Sizes (the hub's base models): BERT, RoBERTa, ELECTRA-base, MPNet: 12 layers, 768 wide,
12 heads, 3072 feed-forward; DistilBERT: 6 such layers; DeBERTa-v3-base: the same with
relative attention (256 buckets, c2p and p2c, shared keys); ModernBERT-base: 22 layers, 768
wide, 12 heads, 1152 GeGLU, a global layer every third, local window 128.
"""

import os
import shutil
import sys

import torch
import transformers
from tokenizers import Tokenizer

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "fixtures",
                        "text-encoders")
BASE = dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12, intermediate_size=3072)


def config(architecture, tok):
    v = tok.get_vocab_size()
    pad = lambda name: tok.token_to_id(name)  # noqa: E731
    if architecture == "bert":
        return transformers.BertConfig(vocab_size=v, **BASE, max_position_embeddings=512,
                                       pad_token_id=pad("[PAD]"))
    if architecture == "roberta":
        return transformers.RobertaConfig(vocab_size=v, **BASE, max_position_embeddings=514,
                                          type_vocab_size=1, pad_token_id=pad("<pad>"))
    if architecture == "distilbert":
        return transformers.DistilBertConfig(vocab_size=v, dim=768, n_layers=6, n_heads=12,
                                             hidden_dim=3072, max_position_embeddings=512,
                                             pad_token_id=pad("[PAD]"))
    if architecture == "electra":
        return transformers.ElectraConfig(vocab_size=v, embedding_size=768, **BASE,
                                          max_position_embeddings=512, pad_token_id=pad("[PAD]"))
    if architecture == "mpnet":
        return transformers.MPNetConfig(vocab_size=v, **BASE, max_position_embeddings=514,
                                        pad_token_id=pad("<pad>"))
    if architecture == "deberta-v2":
        return transformers.DebertaV2Config(
            vocab_size=v, **BASE, max_position_embeddings=512, relative_attention=True,
            position_buckets=256, max_relative_positions=-1, pos_att_type=["p2c", "c2p"],
            share_att_key=True, norm_rel_ebd="layer_norm", position_biased_input=False,
            type_vocab_size=0, layer_norm_eps=1e-7, pad_token_id=pad("[PAD]"))
    if architecture == "modernbert":
        return transformers.ModernBertConfig(
            vocab_size=v, hidden_size=768, num_hidden_layers=22, num_attention_heads=12,
            intermediate_size=1152, max_position_embeddings=8192, global_attn_every_n_layers=3,
            local_attention=128, pad_token_id=pad("[PAD]"), bos_token_id=pad("[CLS]"),
            eos_token_id=pad("[SEP]"), cls_token_id=pad("[CLS]"), sep_token_id=pad("[SEP]"))
    sys.exit(f"unknown architecture {architecture!r}")


def main():
    architecture, out = sys.argv[1], sys.argv[2]
    fixture = os.path.join(FIXTURES, architecture)
    tok = Tokenizer.from_file(os.path.join(fixture, "tokenizer.json"))
    torch.manual_seed(0)
    model = transformers.AutoModel.from_config(config(architecture, tok)).eval()
    os.makedirs(out, exist_ok=True)
    model.save_pretrained(out)
    shutil.copy(os.path.join(fixture, "tokenizer.json"), os.path.join(out, "tokenizer.json"))
    params = sum(p.numel() for p in model.parameters())
    print(f"{architecture}: {params} parameters in {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
