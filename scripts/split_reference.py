"""An independent reference for drift's once-per-slice train/test split.

This re-implements, from the algorithm documented in src/slices/split.rs and using
only the Python standard library, the split that `drift::slices::split_slice`
computes, and writes the exact train and test rows of a few fixed inputs as JSON
(tests/fixtures/split.json, checked by tests/split.rs). Nothing here calls drift or
any ChaCha library: the ChaCha20 block function is written out from RFC 8439.

The random stream is ChaCha20 as `rand_chacha`'s `ChaCha20Rng::from_seed(key)`
realises it: the RFC 8439 state (four constants, the 32-byte key as eight
little-endian words), with words 12-13 a 64-bit block counter starting at 0 (low
word first) and words 14-15 a 64-bit stream id of 0. For the counters used here
this is exactly RFC 8439's block function with an all-zero nonce and block counter
0, 1, 2, ... The key stream is the sequence of output words of consecutive blocks,
and `next_u64` takes the next two words `lo`, `hi` and returns `hi << 32 | lo`
(a fresh generator, read only through `next_u64`, never splits a pair across
blocks).

Usage: split_reference.py [OUTPUT]  (default: print the JSON to stdout)
"""

import hashlib
import json
import struct
import sys

MASK32 = 0xFFFFFFFF
CONSTANTS = (0x61707865, 0x3320646E, 0x79622D32, 0x6B206574)  # "expand 32-byte k"


def _rotl(x, n):
    return ((x << n) | (x >> (32 - n))) & MASK32


def _quarter_round(s, a, b, c, d):
    s[a] = (s[a] + s[b]) & MASK32
    s[d] = _rotl(s[d] ^ s[a], 16)
    s[c] = (s[c] + s[d]) & MASK32
    s[b] = _rotl(s[b] ^ s[c], 12)
    s[a] = (s[a] + s[b]) & MASK32
    s[d] = _rotl(s[d] ^ s[a], 8)
    s[c] = (s[c] + s[d]) & MASK32
    s[b] = _rotl(s[b] ^ s[c], 7)


def chacha20_block(state):
    """RFC 8439 §2.3: the 16 output words of one block for a 16-word input state."""
    x = list(state)
    for _ in range(10):
        _quarter_round(x, 0, 4, 8, 12)
        _quarter_round(x, 1, 5, 9, 13)
        _quarter_round(x, 2, 6, 10, 14)
        _quarter_round(x, 3, 7, 11, 15)
        _quarter_round(x, 0, 5, 10, 15)
        _quarter_round(x, 1, 6, 11, 12)
        _quarter_round(x, 2, 7, 8, 13)
        _quarter_round(x, 3, 4, 9, 14)
    return [(a + b) & MASK32 for a, b in zip(x, state)]


def rfc8439_state(key, counter, nonce):
    """RFC 8439 §2.3 state: constants, key, 32-bit counter, 96-bit nonce."""
    assert len(key) == 32 and len(nonce) == 12
    return (
        list(CONSTANTS)
        + list(struct.unpack("<8I", key))
        + [counter & MASK32]
        + list(struct.unpack("<3I", nonce))
    )


class ChaCha20Stream:
    """`ChaCha20Rng::from_seed(key)`, read through `next_u64` only."""

    def __init__(self, key):
        assert len(key) == 32
        self.key_words = list(struct.unpack("<8I", key))
        self.counter = 0  # 64-bit block counter (words 12, 13); stream id 0 (words 14, 15)
        self.words = []
        self.pos = 0

    def _block(self):
        state = (
            list(CONSTANTS)
            + self.key_words
            + [self.counter & MASK32, self.counter >> 32, 0, 0]
        )
        self.counter += 1
        return chacha20_block(state)

    def next_u32(self):
        if self.pos == len(self.words):
            self.words = self._block()
            self.pos = 0
        word = self.words[self.pos]
        self.pos += 1
        return word

    def next_u64(self):
        lo = self.next_u32()
        hi = self.next_u32()
        return (hi << 32) | lo


def stream(purpose, seed, label):
    key = hashlib.sha256(f"{purpose}:{seed}:{label}".encode("utf-8")).digest()
    return ChaCha20Stream(key)


def uniform(rng, n):
    """A uniform integer in 0..n: draw x until x < n * floor((2^64 - 1) / n), return x mod n."""
    zone = n * ((2**64 - 1) // n)
    while True:
        x = rng.next_u64()
        if x < zone:
            return x % n


def shuffle(rng, items):
    """Fisher-Yates from the last position down: swap(i, uniform(i + 1))."""
    for i in range(len(items) - 1, 0, -1):
        j = uniform(rng, i + 1)
        items[i], items[j] = items[j], items[i]


def test_quotas(sizes, n_test):
    """One test row per class, the rest by largest remainder over `rows - 2`
    (ties to the smaller label; `sizes` is in ascending label order)."""
    c = len(sizes)
    extra = n_test - c
    capacity = [m - 2 for m in sizes]
    total = sum(capacity)
    quotas = [1] * c
    if total == 0:
        return quotas
    remainders = []
    for k, cap in enumerate(capacity):
        quotas[k] += extra * cap // total
        remainders.append((extra * cap % total, k))
    remainders.sort(key=lambda rk: (-rk[0], rk[1]))
    for _, k in remainders[: extra - (sum(quotas) - c)]:
        quotas[k] += 1
    assert sum(quotas) == n_test
    return quotas


def split_slice(rows, labels, seed, slice_label, train_fraction, stratify):
    n = len(rows)
    if n < 3:
        return sorted(rows), [], False
    n_train = min(max(int(n * train_fraction + 1e-9), 1), n - 1)
    n_test = n - n_train
    rng = stream("drift-split-v1", seed, slice_label)

    classes = None
    if stratify == "auto" and labels is not None:
        assert len(labels) == len(rows)
        by_class = {}
        for row, label in zip(rows, labels):
            by_class.setdefault(label, []).append(row)
        c = len(by_class)
        if (
            c >= 2
            and all(len(m) >= 2 for m in by_class.values())
            and n_train >= c
            and n_test >= c
        ):
            classes = [sorted(by_class[label]) for label in sorted(by_class)]

    train, test = [], []
    if classes is not None:
        quotas = test_quotas([len(m) for m in classes], n_test)
        for members, quota in zip(classes, quotas):
            shuffle(rng, members)
            test += members[:quota]
            train += members[quota:]
    else:
        # The module doc does not say in which order the rows enter this shuffle; like
        # the stratified case, ascending row order (all inputs below are ascending).
        everything = sorted(rows)
        shuffle(rng, everything)
        test = everything[:n_test]
        train = everything[n_test:]
    return sorted(train), sorted(test), classes is not None


def self_test():
    # RFC 8439 §2.3.2: key 00..1f, nonce 000000090000004a00000000, block counter 1.
    state = rfc8439_state(
        bytes(range(32)), 1, bytes.fromhex("000000090000004a00000000")
    )
    assert chacha20_block(state) == [
        0xE4E7F110, 0x15593BD1, 0x1FDD0F50, 0xC47120A3,
        0xC7F4D1C7, 0x0368C033, 0x9AAA2204, 0x4E6CD4C3,
        0x466482D2, 0x09AA9F07, 0x05D7C214, 0xA2028BD9,
        0xD19C12B5, 0xB94E16DE, 0xE883D0CB, 0x4E3C50A2,
    ]  # fmt: skip
    # RFC 8439 §A.1 test vectors 1 and 2 (all-zero key and nonce, counters 0 and 1),
    # read as the stream: first u64 is word 0 | word 1 << 32.
    rng = ChaCha20Stream(bytes(32))
    assert rng.next_u64() == 0x903DF1A0_ADE0B876
    for _ in range(7):
        rng.next_u64()
    assert rng.next_u64() == 0x7A385155_BEE7079F  # first words of block 1
    # §A.1 test vector 3: key ...01, block counter 1.
    rng = ChaCha20Stream(bytes(31) + b"\x01")
    for _ in range(8):
        rng.next_u64()
    assert rng.next_u64() == 0x9249F8EC_2452EB3A


def cases():
    pinned_rows = [r * 3 + 1 for r in range(1000)]
    pinned_labels = [(r * 7) % 3 for r in range(1000)]
    # 60 rows, three classes of 38, 20 and 2 rows (labels 0, 4, 9, interleaved).
    mixed_rows = [5 + 2 * r for r in range(60)]
    mixed_labels = [9 if r in (17, 44) else (4 if r % 3 == 1 else 0) for r in range(60)]
    # 257 rows, four classes; three of equal size tie in the largest remainder.
    tie_rows = list(range(100, 357))
    tie_labels = [[3, 1, 7, 2][r % 4] for r in range(257)]
    return [
        (pinned_rows, pinned_labels, 0, "1978", 0.7, "auto"),
        (pinned_rows, pinned_labels, 0, "1978", 0.7, "never"),
        (mixed_rows, mixed_labels, 42, "2001-Q3", 0.8, "auto"),
        (mixed_rows, mixed_labels, 42, "2001-Q3", 0.8, "never"),
        (tie_rows, tie_labels, 2**64 - 1, "régime ②", 0.7, "auto"),
        ([3, 7, 11], [0, 1, 0], 7, "tiny", 0.7, "auto"),
        (list(range(40)), None, 123456789, "no labels", 0.8, "auto"),
    ]


def main():
    self_test()
    out = []
    for rows, labels, seed, slice_label, train_fraction, stratify in cases():
        train, test, stratified = split_slice(
            rows, labels, seed, slice_label, train_fraction, stratify
        )
        out.append(
            {
                "rows": rows,
                "labels": labels,
                "seed": seed,
                "slice_label": slice_label,
                "train_fraction": train_fraction,
                "stratify": stratify,
                "train": train,
                "test": test,
                "stratified": stratified,
            }
        )
    text = json.dumps({"cases": out}, sort_keys=True, separators=(",", ":")) + "\n"
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
