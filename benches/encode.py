"""The Python half of the encoder benchmark (benches/encode.rs drives it).

Encodes a fixed list of texts on the CPU, in one of two ways:

- `--encoder minilm|mpnet --archive FILE`: the packaged encoder through
  `SentenceTransformer.encode` (batch size --batch, `max_seq_length` = --max-len, mean
  pooling and normalisation as the package's modules.json says), loaded from the same
  pinned archive drift reads (SHA-256 checked, its model folder unzipped into a temporary
  directory by scripts/encoder_fixtures.py's `unpack`);
- `--folder DIR`: a hub folder (benches/base_encoders.py's random base-size models)
  through `transformers.AutoModel`, tokenised with its `tokenizer.json` (truncated at
  --max-len), in batches of --batch texts sorted longest first as sentence-transformers
  and drift sort them, padded, and mean-pooled over the real tokens.

Normally run by the Rust driver with --serve, one JSON object a line each way. After a
greeting {"torch": version, "sentence_transformers": version, "threads": n}:

- {"check": path} -> {"rows": n}: encodes the texts once (untimed, also the warm-up) and
  writes the embeddings to `path` as raw little-endian float32, rows x width, which the
  driver compares with drift's;
- {"run": 1} -> {"seconds": s}: the wall time of one encode of all the texts.

    eval "$(scripts/libtorch-env)"; cargo bench --features torch --bench encode

By hand, with the texts as a JSON list of strings: prints {"seconds": [one per rep]}:

    py="$(scripts/venv-pins --set encoder-peer)"
    "$py" benches/encode.py --encoder minilm --archive WHEEL --texts texts.json --reps 5
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


class Folder:
    """A hub folder's model with its tokenizer, encoding as drift's `Encoder::encode`."""

    def __init__(self, folder, max_len):
        import transformers
        from tokenizers import Tokenizer

        self.model = transformers.AutoModel.from_pretrained(folder).eval()
        self.tokenizer = Tokenizer.from_file(os.path.join(folder, "tokenizer.json"))
        self.tokenizer.enable_truncation(max_len)

    def encode(self, texts, batch_size):
        ids = [e.ids for e in self.tokenizer.encode_batch(texts)]
        order = sorted(range(len(texts)), key=lambda i: (-len(ids[i]), i))
        out = [None] * len(texts)
        for start in range(0, len(order), batch_size):
            rows = order[start:start + batch_size]
            width = len(ids[rows[0]])
            batch = torch.zeros((len(rows), width), dtype=torch.long)
            mask = torch.zeros((len(rows), width), dtype=torch.long)
            for b, i in enumerate(rows):
                batch[b, :len(ids[i])] = torch.tensor(ids[i])
                mask[b, :len(ids[i])] = 1
            states = self.model(input_ids=batch, attention_mask=mask).last_hidden_state
            real = mask.unsqueeze(-1).to(states.dtype)
            pooled = (states * real).sum(1) / real.sum(1).clamp(min=1e-9)
            for b, i in enumerate(rows):
                out[i] = pooled[b]
        return torch.stack(out).numpy()


def load(args, into):
    if args.folder:
        return Folder(args.folder, args.max_len)
    unpack(args.encoder, args.archive, into)
    model = SentenceTransformer(into, device="cpu")
    model.max_seq_length = args.max_len
    return model


def encode(model, texts, batch):
    with torch.no_grad():
        if isinstance(model, Folder):
            return model.encode(texts, batch)
        return model.encode(texts, batch_size=batch, convert_to_numpy=True,
                            show_progress_bar=False)


def timed(model, texts, batch):
    start = time.perf_counter()
    encode(model, texts, batch)
    return time.perf_counter() - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--serve", action="store_true", help="take commands on stdin")
    parser.add_argument("--encoder", help="a packaged encoder: minilm or mpnet")
    parser.add_argument("--archive", help="its pinned archive")
    parser.add_argument("--folder", help="a hub folder instead")
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
        model = load(args, model_dir)
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
