#!/usr/bin/env python3
"""Tokenizer cases llama.cpp's own files (../shared/models/vocab/*.inp/.out) leave out, tokenized
by llama.cpp through llama-cpp-python (a vocabulary-only load, no special tokens added or parsed):
texts whose combining marks (\\p{M}) Qwen3.5's pre-tokenizer counts as letters where Qwen 2's
does not; and texts that GPT-4o's pre-tokenizer (gpt-oss's) splits at changes of letter case,
after three digits and after punctuation, on the synthetic models' gpt-4o-vocab.gguf (Llama 3's
vocabulary with that pre-tokenizer, scripts/make_synthetic_models.py). Writes
Tests/reference/tokenizer/NAME.json, which TokenizerTests checks.
Usage: make_tokenizer_references.py SHARED_DIR SYNTHETIC_MODELS_DIR OUT_DIR"""
import ctypes
import json
import pathlib
import sys

import llama_cpp

CASES = {
    "qwen35": [
        "नमस्ते दुनिया, क्या हाल है?",
        "cafe\u0301 nai\u0308ve re\u0301sume\u0301",
        "\u0301leading mark and a\u0300\u0301\u0302 stacked marks",
        "Ελληνικά: ά έ ή ί ό ύ ώ — и ру́сский с ударе́нием",
        "ภาษาไทย ที่มีสระ และวรรณยุกต์",
        "x\u20d7 + y\u0305 = z\u0332\u0332!",
        "ﷺ ٱلْعَرَبِيَّة مع التشكيل",
        "'re 'S 'LL \u0301's",
    ],
    "gpt-4o": [
        "HelloWorld helloWORLD HELLOworld camelCaseNames XMLHttpRequest iPhone",
        "DON'T don't Don'T I'M we'LL they'Re it'S 'S",
        "Übergrößenträger ÄÖÜ äöü ÄBC aÄb Straße ΣΊΣΥΦΟΣ σίσυφος ПРИВЕТмир",
        "12345678 1,234,567.89 3.14159 ٣٤٥٦٧ x2y34z",
        "a/b//c path/to/file.txt ?!/\n--/\r\nend ... ---",
        "  leading   spaces\t\ttabs \n\n  \n lines\r\n\r\n  trailing   ",
        "cafe\u0301 nai\u0308ve A\u0301B \u0301mark नमस्ते",
        "日本語のテキスト 中文 한국어 emoji 🙂🙃 ✓ x≤y",
        "$100 + 200€ = #hash @user <tag> {json: [1, 2]}",
        " Hello\n World!\n\n  Hi",
        "iPhone YouTube JavaScript PowerPoint GitHub macOS iOS eBay LinkedIn WiFi PhD OpenAI TypeScript McDonald",
        "--\n/x ;\r\n/usr **/\n/* end */\n/",
        "ÄBC ÉCOLEécole ŁÓDŹłódź ΑΒΓαβγ",
    ],
}


def tokenize(vocab, text):
    data = text.encode("utf-8")
    tokens = (llama_cpp.llama_token * (len(data) + 8))()
    count = llama_cpp.llama_tokenize(vocab, data, len(data), tokens, len(tokens), False, False)
    assert count >= 0, text
    return list(tokens[:count])


def main(shared, synthetic, out):
    llama_cpp.llama_backend_init()
    out.mkdir(parents=True, exist_ok=True)
    files = {"qwen35": shared / "models/vocab/ggml-vocab-qwen35.gguf", "gpt-4o": synthetic / "gpt-4o-vocab.gguf"}
    for name, texts in CASES.items():
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        model = llama_cpp.llama_model_load_from_file(str(files[name]).encode(), params)
        vocab = llama_cpp.llama_model_get_vocab(model)
        cases = [{"text": text, "ids": tokenize(vocab, text)} for text in texts]
        lines = ",\n".join(" " + json.dumps(case, ensure_ascii=False) for case in cases)
        (out / f"{name}.json").write_text(f'{{"vocabulary": "{files[name].name}", "cases": [\n{lines}\n]}}\n')
        llama_cpp.llama_model_free(model)
        print(name, len(cases))


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]), pathlib.Path(sys.argv[3]))
