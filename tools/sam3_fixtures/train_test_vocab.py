#!/usr/bin/env python3
"""Trains samstream's own small byte-level BPE vocabulary for the SAM 3 tokenizer's tests and tiny model.

The official SAM 3 vocabulary (bpe_simple_vocab_16e6.txt.gz, CLIP's merges, shipped in Meta's sam3
repository under the SAM License) is not ours to commit. The tests and the tiny fixture model use this
one instead: the same file format (a gzip text file, a header line, then one merge "left right" a line,
symbols written with the bytes-to-unicode alphabet, "</w>" marking a word's end), learned here from a
small corpus of shape, colour and object words by plain BPE: count adjacent symbol pairs over the
corpus's words (weighted by frequency), merge the most frequent pair (ties: the smallest pair in string
order), repeat.

Usage: python3 train_test_vocab.py [--merges 300] [--out PATH]
The output is deterministic (gzip without a timestamp or name).
"""
import argparse
import collections
import gzip
import re

COLOURS = ("red green blue yellow orange purple pink brown black white gray grey cyan magenta violet "
           "gold silver beige navy teal maroon olive lime crimson turquoise")
SHAPES = ("circle square triangle rectangle disc disk ellipse oval star hexagon pentagon diamond ring "
          "line dot cross arrow heart cube sphere cylinder cone stripe stripes squares circles triangles")
OBJECTS = ("person people man woman child car cars truck trucks forklift forklifts bus bicycle bike "
           "motorcycle dog cat bird horse cow sheep box boxes ball balls pallet pallets worker workers "
           "helmet vest chair table door window tree trees road sign light camera shelf shelves crate")
SIZES = "small large big tiny little huge tall short long wide narrow bright dark light pale striped"
FRAMES = [
    "a {c} {s}", "the {c} {s}", "{z} {c} {s}", "a {z} {s}", "every {o}", "the {o} on the left",
    "{c} {o}", "a {o} near the {s}", "two {c} {s}s", "the {z} {c} {o} in the corner",
]


def corpus():
    colours, shapes, objects, sizes = (x.split() for x in (COLOURS, SHAPES, OBJECTS, SIZES))
    lines = []
    for i, frame in enumerate(FRAMES):
        for j in range(40):
            lines.append(frame.format(c=colours[(i * 7 + j) % len(colours)], s=shapes[(i * 5 + j * 3) % len(shapes)],
                                      o=objects[(i * 11 + j * 5) % len(objects)], z=sizes[(i + j) % len(sizes)]))
    lines += colours + shapes + objects + sizes
    lines += ["0 1 2 3 4 5 6 7 8 9", "left right top bottom middle centre center corner edge",
              "first second third one two three four five many every all some"]
    return lines


def train(lines, merges_wanted):
    words = collections.Counter()
    for line in lines:
        for w in re.findall(r"[a-z]+|[0-9]|[^\sa-z0-9]+", line.lower()):
            words[tuple(w[:-1]) + (w[-1] + "</w>",)] += 1
    merges = []
    while len(merges) < merges_wanted:
        pairs = collections.Counter()
        for symbols, n in words.items():
            for a, b in zip(symbols, symbols[1:]):
                pairs[(a, b)] += n
        if not pairs:
            break
        best = min(pairs, key=lambda p: (-pairs[p], p))
        merges.append(best)
        merged = collections.Counter()
        for symbols, n in words.items():
            out, i = [], 0
            while i < len(symbols):
                if i + 1 < len(symbols) and (symbols[i], symbols[i + 1]) == best:
                    out.append(symbols[i] + symbols[i + 1])
                    i += 2
                else:
                    out.append(symbols[i])
                    i += 1
            merged[tuple(out)] += n
        words = merged
    return merges


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--merges", type=int, default=300)
    ap.add_argument("--out", default="gpu/src/test/resources/fixtures/sam3/tokenizer/test_bpe_vocab.txt.gz")
    args = ap.parse_args()
    merges = train(corpus(), args.merges)
    text = "#version: samstream test vocabulary (train_test_vocab.py)\n" + "\n".join(a + " " + b for a, b in merges)
    with open(args.out, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as f:
            f.write(text.encode("utf-8"))
    print("wrote %d merges to %s" % (len(merges), args.out))


if __name__ == "__main__":
    main()
