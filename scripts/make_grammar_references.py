#!/usr/bin/env python3
"""llama.cpp's verdicts on GBNF grammars and strings, for Lumen's grammar tests.

Usage: make_grammar_references.py TEST_GBNF_VALIDATOR OUT.json

TEST_GBNF_VALIDATOR is llama.cpp's tests/test-gbnf-validator (built by `make llama-server` in
.build/llama.cpp/build/bin). For each grammar below it records whether llama.cpp parses it and,
for each input, whether llama.cpp's grammar accepts the whole string. The grammars and inputs
are written here; nothing of llama.cpp is copied.
"""
import json
import os
import subprocess
import sys
import tempfile

JSON = r'''
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9]{1,15})? ws
ws ::= | " " | "\n" [ \t]{0,20}
'''

ARITHMETIC = r'''
# sums of products of integers and parenthesised expressions
root ::= expr
expr ::= term (("+" | "-") term)*
term ::= factor (("*" | "/") factor)*
factor ::= [0-9]+ | "(" expr ")"
'''

CASES = [
    (JSON, ['{}', '{"a": 1}', '{"a": [1, 2.5, -3e10, "x\\n", true, null], "b": {"c": "\\u00e9"}}', '{"a" 1}',
            '{"a": 01}', '[1]', '{"a": "tab\there"}', '{"é": "ü"}', '{', '{"a": 1}\n  ', '{"a": 1,}',
            '{"k": "\\q"}', '{"a": 1e}', '{"n": -0.5E+3}']),
    (ARITHMETIC, ['1+2*3', '(1+2)*3', '((4))', '1+', '+1', '12/(3-4)*5', '()', '1 + 2']),
    ('root ::= [^a-z\\n]+ "\\n"', ['ABC\n', 'AbC\n', '\n', '123 !\n', 'ÉÀ\n', 'ABC']),
    ('root ::= [ぁ-ゟ]+ "。"', ['ひらがな。', 'カタカナ。', 'ひ。', '。']),
    ('root ::= "😀"+ [\\U0001F600-\\U0001F64F] | "\\u00e9" "\\x41"', ['😀😃', '😀😀😀🙏', '😀', 'éA', 'é', '😃😀']),
    ('root ::= "a"{3} "b"{2,} "c"{1,3} "d"{0,2}', ['aaabbc', 'aaabbbbcccdd', 'aabbc', 'aaabc', 'aaabbccccd', 'aaabbcddd', 'aaabbcd']),
    ('root ::= ("ab" | "c"){2,4} "."', ['abc.', 'cc.', 'ababab.', 'ababcab.', 'c.', 'abcabcab.']),
    ('root ::= . . "x"', ['abx', '😀éx', 'ax', 'abcx', '\n\tx']),
    ('root ::= opt "!"\nopt ::= "yes" | "no" |', ['yes!', 'no!', '!', 'maybe!', 'yesno!']),
    ('root ::= item+\n\n# a list item\nitem ::= "- " [a-z]+\n  "\\n"', ['- abc\n- de\n', '- a\n', '', '- A\n', '- ab']),
    ('root ::= "x" (\n  "1" |\n  "2"\n)* "y"', ['xy', 'x12121y', 'x3y', 'x1']),
    ('root ::= [\\[\\]\\-] [a\\-z]', ['[a', ']-', '-z', 'bz', '[b']),
    ('root ::= ("a" [0-9]?)*', ['', 'a', 'a1a2a', 'a12', '1']),
    ('root ::= "\\"" [^"]* "\\""', ['"hello"', '""', '"a"b"', '"unterminated']),
    ('root ::= [a-c]{0,5} [x-z]{2}', ['xy', 'abcabxy', 'abcabcxy', 'ax', 'axyz']),
    ('root   ::=   word ( " " word )*   # words\nword ::= [A-Za-z]+', ['Hello world', 'one', 'two  spaces', ' lead']),
    ('root ::= "a" |\n  "b" |\n  "c" "d"', ['a', 'b', 'cd', 'c', 'd', 'ab']),
    ('root ::= item+\nitem ::= "- " [a-z]+ "\\n"', ['- abc\n- de\n', '- a\n', '', '- A\n', '- ab']),
    ('root ::= [^\\x00-\\x7F]{2} [\\u0100-\\u017F]', ['éüā', 'ab\u0101', 'ééé', 'ā', '日本ő']),
    # Grammars llama.cpp refuses.
    ('root ::= missing', []),
    ('root := "a"', []),
    ('root ::= "unclosed', []),
    ('root ::= root "a" | "a"', []),
    ('root ::= [a-', []),
    ('root ::= "a" \\q', []),
    ('root ::= ("a" | "b"', []),
    ('other ::= "a"', []),
]


def verdict(validator, grammar_path, text):
    with tempfile.NamedTemporaryFile('wb', delete=False, suffix='.txt') as handle:
        handle.write(text.encode('utf-8'))
        path = handle.name
    try:
        result = subprocess.run([validator, grammar_path, path], capture_output=True, text=True, errors='replace')
    finally:
        os.unlink(path)
    if 'Failed to initialize' in result.stdout:
        return None
    if 'is valid according' in result.stdout:
        return True
    if 'is invalid according' in result.stdout:
        return False
    raise SystemExit(f'unexpected validator output: {result.stdout!r} {result.stderr!r}')


def main():
    validator, out = sys.argv[1], sys.argv[2]
    cases = []
    for grammar, inputs in CASES:
        with tempfile.NamedTemporaryFile('w', delete=False, suffix='.gbnf', encoding='utf-8') as handle:
            handle.write(grammar)
            grammar_path = handle.name
        try:
            parses = verdict(validator, grammar_path, '') is not None
            results = [{'text': text, 'valid': verdict(validator, grammar_path, text)} for text in inputs] if parses else []
        finally:
            os.unlink(grammar_path)
        cases.append({'grammar': grammar, 'parses': parses, 'inputs': results})
    with open(out, 'w', encoding='utf-8') as handle:
        json.dump({'made_by': 'scripts/make_grammar_references.py with llama.cpp test-gbnf-validator', 'cases': cases}, handle,
                  ensure_ascii=False, indent=1)
        handle.write('\n')


if __name__ == '__main__':
    main()
