"""Small random text encoders of every architecture drift loads, and what `transformers`
computes with them (src/encoders/text/, read by tests/text_encoders.rs).

Run through scripts/make-fixtures with the `encoder-peer` set of scripts/pins. For each
architecture (bert, roberta, distilbert, electra, mpnet, deberta-v2, modernbert) it

1. builds a small tokenizer of the model's own kind from the corpus below with `tokenizers`
   (WordPiece for BERT, DistilBERT, ELECTRA and MPNet; byte-level BPE for RoBERTa and
   ModernBERT; Unigram with a Metaspace pre-tokenizer for DeBERTa-v3), with the special
   tokens and post-processor its hub models have;
2. builds the model at a small random configuration with `transformers` (seeded), then
   perturbs every parameter (LayerNorm gains and biases, relative-position tables and all)
   by N(0, 0.1) noise, so that no part of the forward pass sits at an initialiser's
   trivial value;
3. saves it as a hub folder (`config.json`, `model.safetensors`, `tokenizer.json`) under
   `tests/fixtures/text-encoders/<architecture>/`;
4. encodes the TEXTS below, truncated to MAX_LEN tokens counting the special tokens and
   padded to the longest in one batch with an attention mask, and writes
   `reference.safetensors` beside the model: `ids` and `states` (the last hidden states,
   zero at padding) `[texts, MAX_LEN(, hidden)]`, `lengths`, and the `mean` (over the real
   tokens) and `cls` (first token) pooled embeddings.

`reference.json` at the top records the versions, the texts and MAX_LEN. Deterministic:
one thread, fixed seeds, the model in eval mode (no dropout).
"""

import json
import os
import sys

import safetensors
import tokenizers
import torch
import transformers
from safetensors.torch import save_file
from tokenizers import Tokenizer, decoders, models, normalizers, pre_tokenizers, processors

MAX_LEN = 48
HIDDEN = 32
HEADS = 4
LAYERS = 3
INTERMEDIATE = 64
POSITIONS = 64

# Long enough to be truncated at MAX_LEN by every tokenizer.
LONG = " ".join(
    f"Paragraph {i}: the committee reviewed quarterly figures and postponed the vote."
    for i in range(1, 12)
)

TEXTS = [
    "",
    " ",
    "Hello world",
    "A man is eating food.",
    "The girl is carrying a baby.",
    "A woman is playing violin on the old bridge at night.",
    "Two men pushed carts through the woods.",
    "THE NEW MOVIE IS AWESOME!!!",
    "the the the the the the",
    "Grüße aus Köln, schöne Straße.",
    "Café crème, déjà vu, naïve façade.",
    "日本語のテキストです。",
    "Привет, как дела?",
    "مرحبا بالعالم",
    "emoji: 🙂🚀🔥 and more 🎉",
    "numbers 12345 67.89 -3e10 0x1F",
    "punctuation?! ... ;; -- ((brackets)) [[x]] {y}",
    "e-mail: someone@example.com, url: https://example.org/a?b=c",
    "tab\tseparated\tvalues",
    "new\nlines\nhere",
    "CamelCaseWordsAndSnake_case_words",
    "a",
    "Z",
    "supercalifragilisticexpialidocious",
    "The committee reviewed quarterly figures.",
    "Vaccines, influenza and the flu season of 2014.",
    "Obesity rates rise; doctors urge more exercise.",
    "A very unusual token: qwxzjvk.",
    LONG,
    LONG.upper(),
]

# What the tokenizers are trained on: the texts, and more of the same kind of words.
CORPUS = TEXTS + [
    "The quick brown fox jumps over the lazy dog.",
    "Health news: new study on diet, sleep and heart disease.",
    "Markets fell sharply as investors weighed the new tariffs.",
    "She sells sea shells by the sea shore.",
    "In 2014 the hospital opened a new wing for children.",
] * 3


# The vocabularies are built here, deterministically (ties broken by the token), rather
# than by `tokenizers`' trainers, whose vocabularies differ from run to run (their hash
# maps' order breaks ties): the fixtures must come out byte for byte the same.


def words(pre_tokenizer):
    """Every pre-token of the corpus with its count, in first-seen order."""
    counts = {}
    for text in CORPUS:
        for word, _ in pre_tokenizer.pre_tokenize_str(text):
            counts[word] = counts.get(word, 0) + 1
    return counts


def frequent(counts, n):
    return [w for w, _ in sorted(counts.items(), key=lambda wc: (-wc[1], wc[0]))[:n]]


def wordpiece(cls, sep, pad, unk, mask):
    normalizer = normalizers.BertNormalizer(lowercase=True)
    pre = pre_tokenizers.BertPreTokenizer()
    counts = words(pre)
    counts = {normalizer.normalize_str(w): c for w, c in counts.items()}
    chars = sorted({ch for w in counts for ch in w})
    specials = [pad, unk, cls, sep, mask] if cls == "[CLS]" else [cls, pad, sep, unk, mask]
    # Characters (alone and as continuations), then the most frequent words whole.
    tokens = specials + chars + ["##" + ch for ch in chars]
    tokens += [w for w in frequent(counts, 400) if w not in tokens][: 400 - len(tokens)]
    tok = Tokenizer(
        models.WordPiece({t: i for i, t in enumerate(tokens)}, unk_token=unk, max_input_chars_per_word=100)
    )
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre
    tok.post_processor = processors.TemplateProcessing(
        single=f"{cls} $A {sep}",
        special_tokens=[(cls, tok.token_to_id(cls)), (sep, tok.token_to_id(sep))],
    )
    tok.decoder = decoders.WordPiece()
    return tok


def byte_bpe(template):
    pre = pre_tokenizers.ByteLevel(add_prefix_space=False)
    specials = ["<s>", "<pad>", "</s>", "<unk>", "<mask>"]
    if template == "modernbert":
        specials = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]"]
    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    vocab = specials + alphabet
    # Byte-pair merges learnt greedily: the most frequent adjacent pair (ties by the pair).
    corpus = {tuple(w): c for w, c in words(pre).items()}
    merges = []
    while len(vocab) < 500:
        pairs = {}
        for word, c in corpus.items():
            for a, b in zip(word, word[1:]):
                pairs[(a, b)] = pairs.get((a, b), 0) + c
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append(best)
        vocab.append(best[0] + best[1])
        merged = {}
        for word, c in corpus.items():
            out, i = [], 0
            while i < len(word):
                if i + 1 < len(word) and (word[i], word[i + 1]) == best:
                    out.append(best[0] + best[1])
                    i += 2
                else:
                    out.append(word[i])
                    i += 1
            merged[tuple(out)] = merged.get(tuple(out), 0) + c
        corpus = merged
    tok = Tokenizer(models.BPE({t: i for i, t in enumerate(vocab)}, merges))
    tok.pre_tokenizer = pre
    if template == "roberta":
        tok.post_processor = processors.RobertaProcessing(
            ("</s>", tok.token_to_id("</s>")), ("<s>", tok.token_to_id("<s>"))
        )
    else:
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]",
            special_tokens=[("[CLS]", 1), ("[SEP]", 2)],
        )
    tok.decoder = decoders.ByteLevel()
    return tok


def unigram():
    import math

    normalizer = normalizers.NFKC()
    pre = pre_tokenizers.Metaspace()
    counts = {normalizer.normalize_str(w): c for w, c in words(pre).items()}
    specials = ["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"]
    # Pieces: every character and the frequent words whole, scored by their log frequency.
    pieces = {}
    for w, c in counts.items():
        for ch in w:
            pieces[ch] = pieces.get(ch, 0) + c
    for w in frequent(counts, 200):
        pieces[w] = pieces.get(w, 0) + counts[w]
    total = sum(pieces.values())
    ranked = sorted(pieces.items(), key=lambda pc: (-pc[1], pc[0]))
    vocab = [(t, 0.0) for t in specials] + [(p, math.log(c / total)) for p, c in ranked]
    tok = Tokenizer(models.Unigram(vocab, unk_id=3, byte_fallback=False))
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", special_tokens=[("[CLS]", 1), ("[SEP]", 2)]
    )
    tok.decoder = decoders.Metaspace()
    return tok


def common(vocab):
    return dict(
        vocab_size=vocab,
        hidden_size=HIDDEN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        intermediate_size=INTERMEDIATE,
    )


def bert(tok):
    v = tok.get_vocab_size()
    return transformers.BertConfig(
        **common(v),
        max_position_embeddings=POSITIONS,
        pad_token_id=tok.token_to_id("[PAD]"),
    ), transformers.BertModel


def roberta(tok):
    v = tok.get_vocab_size()
    return transformers.RobertaConfig(
        **common(v),
        max_position_embeddings=POSITIONS + 2,
        type_vocab_size=1,
        pad_token_id=tok.token_to_id("<pad>"),
        bos_token_id=tok.token_to_id("<s>"),
        eos_token_id=tok.token_to_id("</s>"),
    ), transformers.RobertaModel


def distilbert(tok):
    v = tok.get_vocab_size()
    return transformers.DistilBertConfig(
        vocab_size=v,
        dim=HIDDEN,
        n_layers=LAYERS,
        n_heads=HEADS,
        hidden_dim=INTERMEDIATE,
        max_position_embeddings=POSITIONS,
        pad_token_id=tok.token_to_id("[PAD]"),
    ), transformers.DistilBertModel


def electra(tok):
    v = tok.get_vocab_size()
    # An embedding narrower than the hidden states, as ELECTRA's discriminators have:
    # exercises the embeddings' projection.
    return transformers.ElectraConfig(
        **common(v),
        embedding_size=16,
        max_position_embeddings=POSITIONS,
        pad_token_id=tok.token_to_id("[PAD]"),
    ), transformers.ElectraModel


def mpnet(tok):
    v = tok.get_vocab_size()
    # max_distance and buckets small enough that MAX_LEN reaches the logarithmic buckets.
    return transformers.MPNetConfig(
        **common(v),
        max_position_embeddings=POSITIONS + 2,
        relative_attention_num_buckets=32,
        pad_token_id=tok.token_to_id("<pad>"),
        bos_token_id=tok.token_to_id("<s>"),
        eos_token_id=tok.token_to_id("</s>"),
    ), transformers.MPNetModel


def deberta(tok):
    v = tok.get_vocab_size()
    # DeBERTa-v3's settings (relative attention with log buckets, shared keys, c2p and
    # p2c, no absolute positions, no token types), with buckets small enough that MAX_LEN
    # reaches the logarithmic ones.
    return transformers.DebertaV2Config(
        **common(v),
        max_position_embeddings=POSITIONS,
        relative_attention=True,
        position_buckets=8,
        max_relative_positions=POSITIONS,
        pos_att_type=["p2c", "c2p"],
        share_att_key=True,
        norm_rel_ebd="layer_norm",
        position_biased_input=False,
        type_vocab_size=0,
        layer_norm_eps=1e-7,
        pad_token_id=tok.token_to_id("[PAD]"),
    ), transformers.DebertaV2Model


def modernbert(tok):
    v = tok.get_vocab_size()
    # A local window shorter than MAX_LEN and a global layer every second one, so that
    # both kinds of attention and both rotary bases are exercised.
    return transformers.ModernBertConfig(
        **common(v),
        max_position_embeddings=POSITIONS,
        global_attn_every_n_layers=2,
        local_attention=8,
        global_rope_theta=160000.0,
        local_rope_theta=10000.0,
        pad_token_id=tok.token_to_id("[PAD]"),
        bos_token_id=tok.token_to_id("[CLS]"),
        eos_token_id=tok.token_to_id("[SEP]"),
        cls_token_id=tok.token_to_id("[CLS]"),
        sep_token_id=tok.token_to_id("[SEP]"),
        attn_implementation="eager",
        reference_compile=False,
    ), transformers.ModernBertModel


ARCHITECTURES = {
    "bert": (lambda: wordpiece("[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]"), bert),
    "roberta": (lambda: byte_bpe("roberta"), roberta),
    "distilbert": (lambda: wordpiece("[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]"), distilbert),
    "electra": (lambda: wordpiece("[CLS]", "[SEP]", "[PAD]", "[UNK]", "[MASK]"), electra),
    "mpnet": (lambda: wordpiece("<s>", "</s>", "<pad>", "[UNK]", "<mask>"), mpnet),
    "deberta-v2": (unigram, deberta),
    "modernbert": (lambda: byte_bpe("modernbert"), modernbert),
}


def build(name, out):
    make_tokenizer, make_model = ARCHITECTURES[name]
    tok = make_tokenizer()
    config, cls = make_model(tok)
    torch.manual_seed(0)
    model = cls(config).eval()
    with torch.no_grad():
        gen = torch.Generator().manual_seed(1)
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=gen) * 0.1)
    os.makedirs(out, exist_ok=True)
    model.save_pretrained(out)
    tok.save(os.path.join(out, "tokenizer.json"))

    # Reload what was saved, as a user's folder is read.
    tok = Tokenizer.from_file(os.path.join(out, "tokenizer.json"))
    tok.enable_truncation(MAX_LEN)
    model = transformers.AutoModel.from_pretrained(out).eval()
    enc = [tok.encode(t) for t in TEXTS]
    lengths = [len(e.ids) for e in enc]
    width = max(lengths)
    pad = config.pad_token_id
    ids = torch.full((len(TEXTS), width), pad, dtype=torch.long)
    mask = torch.zeros((len(TEXTS), width), dtype=torch.long)
    for i, e in enumerate(enc):
        ids[i, : len(e.ids)] = torch.tensor(e.ids)
        mask[i, : len(e.ids)] = 1
    with torch.no_grad():
        states = model(input_ids=ids, attention_mask=mask).last_hidden_state
    real = mask.unsqueeze(-1).to(states.dtype)
    states = states * real
    mean = states.sum(1) / real.sum(1).clamp(min=1e-9)
    full_ids = torch.full((len(TEXTS), MAX_LEN), pad, dtype=torch.long)
    full_ids[:, :width] = ids
    full_states = torch.zeros((len(TEXTS), MAX_LEN, states.shape[-1]))
    full_states[:, :width] = states
    save_file(
        {
            "ids": full_ids,
            "lengths": torch.tensor(lengths, dtype=torch.long),
            "states": full_states.contiguous(),
            "mean": mean.contiguous(),
            "cls": states[:, 0].contiguous(),
        },
        os.path.join(out, "reference.safetensors"),
        metadata={"max_len": str(MAX_LEN)},
    )
    return max(lengths)


def main():
    torch.set_num_threads(1)
    root = sys.argv[1] if len(sys.argv) > 1 else "tests/fixtures/text-encoders"
    os.makedirs(root, exist_ok=True)
    longest = {name: build(name, os.path.join(root, name)) for name in ARCHITECTURES}
    assert all(n == MAX_LEN for n in longest.values()), longest
    with open(os.path.join(root, "reference.json"), "w") as f:
        json.dump(
            {
                "versions": {
                    "torch": torch.__version__,
                    "transformers": transformers.__version__,
                    "tokenizers": tokenizers.__version__,
                    "safetensors": safetensors.__version__,
                },
                "max_len": MAX_LEN,
                "texts": TEXTS,
                "architectures": list(ARCHITECTURES),
            },
            f,
            indent=1,
            sort_keys=True,
            ensure_ascii=False,
        )
        f.write("\n")


if __name__ == "__main__":
    main()
