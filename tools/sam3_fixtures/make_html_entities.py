#!/usr/bin/env python3
"""Writes the HTML5 named character references as the table the Java tokenizer reads.

SAM 3's text cleaning calls Python's html.unescape (twice) and ftfy's unescape_html, both over the
WHATWG list of named character references (Python's html.entities.html5). Java has no such table, so
this script writes it from Python's standard library, one reference a line:

    <name>\t<code point in hex>[ <code point in hex>]

Names keep their trailing ';' where the standard has one; the legacy names without it (amp, lt, ...)
are separate lines, exactly as in html.entities.html5. Output: the resource
gpu/src/main/resources/io/samstream/gpu/sam3/text/html5-entities.tsv (any Python 3.9+ gives the same).
"""
import html.entities
import sys


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else \
        "gpu/src/main/resources/io/samstream/gpu/sam3/text/html5-entities.tsv"
    lines = []
    for name in sorted(html.entities.html5):
        value = html.entities.html5[name]
        lines.append(name + "\t" + " ".join("%X" % ord(c) for c in value))
    with open(out, "w", encoding="ascii", newline="\n") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %d references to %s" % (len(lines), out))


if __name__ == "__main__":
    main()
