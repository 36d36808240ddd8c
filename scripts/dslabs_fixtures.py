"""Reference rows of the two dslabs corpora for tests/corpora.rs, read with the `rdata`
package (MIT; an independent Python reader of R's serialisation) straight out of the
pinned Debian package r-cran-dslabs 0.7.4-1.

    python dslabs_fixtures.py DEB OUT.json

The package keeps its data in R's lazy-load database, `data/Rdata.rdx` (a gzip-compressed
serialised index: each object's offset and length in `Rdata.rdb`) and `Rdata.rdb` (each
object a 4-byte big-endian length and a zlib stream). This script applies the rules that
src/data/corpora/dslabs.rs documents, written out again here from the documentation:

- trump-tweets: every tweet posted from one of three devices ("Twitter Web Client",
  "Twitter for Android", "Twitter for iPhone"), in file order; text as is; time
  `created_at` (seconds since the epoch); label the device.
- movielens: one row per movie (first rating row of each movieId, in file order) with a
  title and a year, keeping movies with at least one of the seven commonest genres; text
  the title; time 1 January of the release year; labels the flags of those seven genres.

Writes, per corpus: the row count, the label counts, the first and last five rows, and
SHA-256 digests of every text, time and label in row order. Deterministic: rerunning gives
the same bytes.
"""

import gzip
import hashlib
import io
import json
import sys
import tarfile
import warnings
import zlib

import rdata

DATA = "./usr/lib/R/site-library/dslabs/data/"
DEVICES = ["Twitter Web Client", "Twitter for Android", "Twitter for iPhone"]
GENRES = ["Drama", "Comedy", "Thriller", "Action", "Romance", "Adventure", "Crime"]


def ar_member(deb, name):
    """The bytes of member `name` of the ar archive `deb` (a .deb is one)."""
    assert deb[:8] == b"!<arch>\n"
    pos = 8
    while pos + 60 <= len(deb):
        header = deb[pos : pos + 60]
        member = header[:16].decode().strip().rstrip("/")
        size = int(header[48:58].decode().strip())
        if member == name:
            return deb[pos + 60 : pos + 60 + size]
        pos += 60 + size + (size % 2)
    raise KeyError(name)


def objects(deb_path):
    deb = open(deb_path, "rb").read()
    tar = tarfile.open(fileobj=io.BytesIO(ar_member(deb, "data.tar.xz")), mode="r:xz")
    rdx = tar.extractfile(DATA + "Rdata.rdx").read()
    rdb = tar.extractfile(DATA + "Rdata.rdb").read()
    index = rdata.conversion.convert(rdata.parser.parse_data(gzip.decompress(rdx)))

    def load(name):
        offset, length = (int(x) for x in index["variables"][name])
        blob = rdb[offset : offset + length]
        raw = zlib.decompress(blob[4:])
        assert len(raw) == int.from_bytes(blob[:4], "big")
        return rdata.conversion.convert(rdata.parser.parse_data(raw))

    return load


def digest(values):
    h = hashlib.sha256()
    for v in values:
        h.update(str(v).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


def summary(texts, times, labels, label_names):
    rows = list(zip(texts, times, labels))
    counts = {}
    for label in labels:
        for name in label if isinstance(label, list) else [label]:
            counts[name] = counts.get(name, 0) + 1
    show = lambda r: {"text": r[0], "time": r[1], "label": r[2]}
    return {
        "rows": len(rows),
        "labels": label_names,
        "counts": dict(sorted(counts.items())),
        "first": [show(r) for r in rows[:5]],
        "last": [show(r) for r in rows[-5:]],
        "texts_sha256": digest(texts),
        "times_sha256": digest(times),
        "labels_sha256": digest("|".join(l) if isinstance(l, list) else l for l in labels),
    }


def trump_tweets(load):
    df = load("trump_tweets")
    texts, times, labels = [], [], []
    for source, text, created in zip(df["source"], df["text"], df["created_at"]):
        if source in DEVICES:
            assert float(created).is_integer()
            texts.append(str(text))
            times.append(int(created))
            labels.append(str(source))
    return summary(texts, times, labels, sorted(DEVICES, key=str.lower))


def movielens(load):
    df = load("movielens")
    seen = set()
    texts, times, labels = [], [], []
    for movie, title, year, genres in zip(df["movieId"], df["title"], df["year"], df["genres"]):
        if movie in seen:
            continue
        seen.add(movie)
        if title is None or str(title) == "<NA>" or year is None or str(year) == "<NA>":
            continue
        flags = [g for g in GENRES if g in str(genres).split("|")]
        if flags:
            texts.append(str(title))
            times.append(f"{int(year)}-01-01")
            labels.append(flags)
    return summary(texts, times, labels, GENRES)


def main(deb, out):
    warnings.simplefilter("ignore")
    load = objects(deb)
    fixture = {"trump-tweets": trump_tweets(load), "movielens": movielens(load)}
    with open(out, "w", encoding="utf-8") as f:
        json.dump(fixture, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
