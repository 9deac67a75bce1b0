/**
 * SAM 3's text tokenizer, byte-exact with Meta's {@code SimpleTokenizer} ({@code sam3/model/tokenizer_ve.py},
 * CLIP's byte-level BPE): {@link io.samstream.gpu.sam3.text.Sam3Tokenizer} (split, BPE, framing, truncation),
 * {@link io.samstream.gpu.sam3.text.TextCleaner} (Meta's "lower" cleaning) over {@code TextFixer} (ftfy's
 * {@code fix_text}) and {@code HtmlCharacterReferences} (Python's {@code html.unescape} and ftfy's), the
 * vocabulary file ({@code BpeVocabulary}) and the byte alphabet ({@code ByteAlphabet}).
 *
 * <p>Licence of the vocabulary: SAM 3's {@code bpe_simple_vocab_16e6.txt.gz} is OpenAI CLIP's merges file as
 * shipped in Meta's sam3 repository, whose files are under the SAM License; samstream does not ship it. It is
 * read from the checkpoint's folder, where a user puts it with {@code sam3.pt}. The tests use a vocabulary
 * samstream trained itself (tools/sam3_fixtures/train_test_vocab.py) and token ids made by Meta's code.
 */
package io.samstream.gpu.sam3.text;
