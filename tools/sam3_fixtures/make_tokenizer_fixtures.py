#!/usr/bin/env python3
"""Token-id fixtures for samstream's SAM 3 tokenizer (io.samstream.gpu.sam3.text), made by Meta's own code.

Imports SimpleTokenizer from Meta's sam3 (sam3/model/tokenizer_ve.py of github.com/facebookresearch/sam3,
never vendored here: pass the folder that holds the `sam3` package) and tokenizes PHRASES with
  (a) samstream's test vocabulary (train_test_vocab.py) -> test_vocab_tokens.json
  (b) the official vocabulary, sam3/assets/bpe_simple_vocab_16e6.txt.gz, when --official names it
      -> official_vocab_tokens.json (token ids only: the vocabulary file itself is not committed).
Per phrase: Meta's cleaned text (clean_fn: ftfy.fix_text, html.unescape twice, whitespace, lower case),
encode() (the BPE ids without start/end) and __call__ at context lengths 32 (SAM 3's text encoder) and 77
(the tokenizer's default), padded with 0 and truncated as Meta does (the last kept id becomes <end_of_text>).

Needs ftfy and regex (pip or Debian packages); torch and iopath are replaced by small stand-ins when missing
(the tokenizer only builds its result with torch.zeros / torch.tensor and opens the file with g_pathmgr).

Usage: python3 make_tokenizer_fixtures.py --sam3 /tmp/sam3src [--official PATH] [--out DIR]
"""
import argparse
import importlib.util
import json
import os
import sys
import types

PHRASES = [
    # ASCII words, case, spacing, contractions, digits, punctuation
    "person", "red car", "a forklift", "Red Circle", "  square  ", "the big blue triangle on the left",
    "forklift's fork", "don't", "it'll", "I'M HERE", "they've", "we'd", "you're", "abc123def", "3.14", "2024",
    "x-ray", "can't-stop", "hello!!!", "(parenthesis)", "tab\tseparated\nlines\r\nand more", "semi;colon",
    "back\\slash", "under_score", "@home #tag $5 %20 ^ & * + = | ~ `", "'quoted'", "\"double\"", "a/b/c",
    "...", "?!", "-", "the quick brown fox jumps over the lazy dog",
    # Unicode: accents, other scripts, emoji, quotes, ligatures, widths, combining marks, spaces, controls
    "café", "naïve", "Crème brûlée", "Ångström", "Straße", "İstanbul", "ΣΑΣ ΟΔΟΣ", "Москва", "東京タワー",
    "你好世界", "한국어 텍스트", "مرحبا", "שלום", "नमस्ते", "ไทย", "😀 smile", "👍🏽", "👨‍👩‍👧 family",
    "🇫🇷 flag", "“quoted”", "‘single’", "it’s", "«guillemets»", "em—dash", "ellipsis…", "ﬁsh ﬂag ﬃ",
    "ＬＯＵＤ　ＮＯＩＳＥＳ", "ｒｅｄ ｃａｒ", "half ｶﾀｶﾅ", "e\u0301te\u0301", "\u00a0nbsp\u00a0",
    "zero\u200bwidth", "line\u2028sep", "para\u2029sep", "soft\u00adhyphen", "\ufeffbom", "C1\x85control",
    "\x93smart\x94 quotes", "ansi \x1b[31mred\x1b[0m", "bell\x07char", "del\x7fchar", "fs\x1cgs\x1drs\x1e",
    "ideographic\u3000space", "thin\u2009space", "ſ long s", "K kelvin", "Ⅻ roman", "½ half", "x²", "١٢٣",
    "ǅungla ĳssel", "\ud800x lone surrogate",
    # HTML character references (ftfy first, then html.unescape twice)
    "&amp;", "fish &amp; chips", "&lt;b&gt;bold&lt;/b&gt;", "&amp;amp;", "&amp;amp;amp;", "&eacute;t&eacute;",
    "&Eacute;", "&NTILDE;", "&EACUTE;t&EACUTE;", "&#39;quote&#39;", "&#x1F600;", "&#128512;", "&#0;",
    "&#x110000;", "&#128;", "&#150;", "&#x81;", "&notit;", "&copy 2024", "&#65", "&#x41", "<b>&amp;</b>",
    "a < b &amp; c", "&unknownentity;", "&&&", "&#xD800;", "&#1114112;", "&#99999999999999999999;", "&#xZZ;",
    "&AMP;", "&quot;hi&quot;", "&nbsp;x&nbsp;", "&hellip;", "&frac12; cup", "&NotEqualTilde;",
    "line one\n<tag> &amp; line two", "first &amp;\nsecond <x> &amp;\nthird &amp;",
    # the special tokens typed as text
    "<start_of_text>", "<END_OF_TEXT> tail", "<|endoftext|>",
    # mojibake that ftfy repairs (UTF-8 read as Latin-1 / Windows-1252)
    "cafÃ©", "Ã©tÃ©", "Ã¼ber", "â€œquotedâ€\x9d", "naÃ¯ve",
    # empty and blank
    "", "   ", "\n\t",
    # long inputs: truncated to the context length
    "red " * 50, "a" * 300, "forklift" * 20, " ".join(["the red circle and the blue square"] * 12),
    "😀" * 40, "9" * 60, "café " * 40, "東京" * 50,
]


def install_stubs():
    """torch and iopath stand-ins when missing: numpy arrays for the result, open() for the file."""
    if importlib.util.find_spec("torch") is None:
        import numpy as np
        torch = types.ModuleType("torch")
        torch.long = np.int64
        torch.LongTensor = np.ndarray
        torch.zeros = lambda *shape, dtype=None: np.zeros(shape, dtype=np.int64)
        torch.tensor = lambda data, **kw: np.asarray(data, dtype=np.int64)
        sys.modules["torch"] = torch
    if importlib.util.find_spec("iopath") is None:
        names = ["iopath", "iopath.common", "iopath.common.file_io"]
        mods = [types.ModuleType(n) for n in names]

        class PathManager:
            @staticmethod
            def open(path, mode="r"):
                return open(path, mode)

        mods[2].g_pathmgr = PathManager()
        mods[0].common, mods[1].file_io = mods[1], mods[2]
        sys.modules.update(dict(zip(names, mods)))


def load_meta_tokenizer_module(sam3_root):
    path = os.path.join(sam3_root, "sam3", "model", "tokenizer_ve.py")
    spec = importlib.util.spec_from_file_location("meta_sam3_tokenizer_ve", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def tokenize_all(module, vocab):
    tok = module.SimpleTokenizer(bpe_path=vocab)
    cases = []
    for text in PHRASES:
        cases.append({
            "text": text,
            "clean": tok.clean_fn(text),
            "encode": [int(i) for i in tok.encode(text)],
            "ids32": [int(i) for i in tok(text, context_length=32)[0]],
            "ids77": [int(i) for i in tok(text, context_length=77)[0]],
        })
    return {"vocab_size": tok.vocab_size, "start": tok.sot_token_id, "end": tok.eot_token_id, "cases": cases}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sam3", required=True, help="folder holding Meta's sam3 package (a checkout's root)")
    ap.add_argument("--official", help="Meta's bpe_simple_vocab_16e6.txt.gz (token ids only are written)")
    ap.add_argument("--out", default="gpu/src/test/resources/fixtures/sam3/tokenizer")
    args = ap.parse_args()
    install_stubs()
    import ftfy
    import regex
    module = load_meta_tokenizer_module(args.sam3)
    runs = [("test_bpe_vocab.txt.gz", os.path.join(args.out, "test_bpe_vocab.txt.gz"), "test_vocab_tokens.json")]
    if args.official:
        runs.append(("bpe_simple_vocab_16e6.txt.gz (Meta's, not committed)", args.official,
                     "official_vocab_tokens.json"))
    for label, vocab, name in runs:
        result = tokenize_all(module, vocab)
        result = {"vocabulary": label, "made_by": "tools/sam3_fixtures/make_tokenizer_fixtures.py with Meta's "
                  "sam3/model/tokenizer_ve.py", "ftfy": ftfy.__version__, "regex": regex.__version__,
                  "python": sys.version.split()[0], **result}
        cases = result.pop("cases")
        head = json.dumps(result, ensure_ascii=True)[:-1]
        with open(os.path.join(args.out, name), "w", encoding="ascii", newline="\n") as f:
            f.write(head + ', "cases": [\n' + ",\n".join(json.dumps(c, ensure_ascii=True) for c in cases)
                    + "\n]}\n")
        result["cases"] = cases
        print("%s: %d phrases, vocabulary %d -> %s" % (label, len(result["cases"]), result["vocab_size"], name))


if __name__ == "__main__":
    main()
