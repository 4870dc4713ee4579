"""Constrained output checked by independent oracles: llama.cpp's own grammar sampler (greedy text
from llama-server with the same GBNF) and its grammar validator (test-gbnf-validator), Python's
`jsonschema` on JSON from many schemas and seeds on both real models, and Python's `re` on
regular-expression output."""
import json
import os
import pathlib
import re
import subprocess
import tempfile

import jsonschema
import pytest

from conftest import lumen_bin
from servers import CACHE, SMOLLM2, start_lumen_serve_of
from test_remote import llama_cpp_server, lumen_script, post  # noqa: F401 (llama_cpp_server: a fixture)

GEMMA = CACHE / "gemma-3-270m-q4_k_m.gguf"
LLAMA_SERVER = pathlib.Path(os.environ.get("LLAMA_SERVER", ""))
# `make llama-server` builds llama.cpp's grammar validator beside llama-server, from the source it unpacks above the build.
VALIDATOR = LLAMA_SERVER.parent / "test-gbnf-validator"
LLAMA_GRAMMARS = LLAMA_SERVER.parent.parent.parent / "source" / "vendor" / "llama.cpp" / "grammars"


@pytest.fixture(scope="module")
def served():
    server = start_lumen_serve_of(SMOLLM2, "--ctx", "2048")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def served_gemma():
    server = start_lumen_serve_of(GEMMA, "--ctx", "2048")
    yield server
    server.stop()


def llama_cpp_verdict(grammar, text):
    """llama.cpp's verdict on `text` under `grammar`: "valid" (a whole sentence), "prefix" (it
    could go on to one) or "invalid"."""
    assert VALIDATOR.exists(), f"{VALIDATOR} is missing (make llama-server builds it)"
    with tempfile.TemporaryDirectory() as directory:
        (pathlib.Path(directory) / "g.gbnf").write_text(grammar)
        (pathlib.Path(directory) / "t.txt").write_bytes(text.encode())
        result = subprocess.run([str(VALIDATOR), f"{directory}/g.gbnf", f"{directory}/t.txt"], capture_output=True, text=True, errors="replace")
    assert "Failed to initialize" not in result.stdout, result.stdout
    if "is valid according" in result.stdout:
        return "valid"
    return "prefix" if "Unexpected end of input" in result.stdout else "invalid"


OWN_GRAMMARS = {
    "yaml-ish": 'root ::= ("- " [a-z]+ " " [0-9]{1,3} "\\n"){2,4}',
    "answer": 'root ::= "Answer: " ("yes" | "no" | "it depends") "."',
    "unicode": 'root ::= [A-Z] [a-zé]{2,8} ("😀" | "!") " " [0-9]+',
}


def grammars():
    """llama.cpp's own grammar files (as users pass them) and a few of ours."""
    found = {path.stem: path.read_text() for path in sorted(LLAMA_GRAMMARS.glob("*.gbnf")) if path.stem in ("json", "json_arr", "list", "arithmetic", "chess")}
    assert len(found) == 5, f"llama.cpp's grammars are missing from {LLAMA_GRAMMARS} (make llama-server unpacks them)"
    return {**found, **OWN_GRAMMARS}


# Where the grammar follows what the model wants to write, greedy choices are clear and Lumen's
# text is llama.cpp's; where it forces the model far from it (arithmetic after a sentence, digits
# after a word), the choice falls between tokens of a few thousandths' probability, which rounding
# decides differently in any two builds (llama-server answers these differently itself once its
# cache holds an earlier request): there the text is checked by llama.cpp's validator only. (The
# JSON prompt was "A JSON object for a book:", whose second token falls between `":` and `":"` at
# probabilities 0.498 and 0.477: Q4_1's eight-row kernel, summing each block's integers before
# scaling them, decides it the other way, and on six JSON prompts agrees with llama.cpp as often as
# the row kernel did, two each.)
FOLLOWED = {"json": "A JSON object describing a person:", "json_arr": "Three fruits as JSON:", "list": "Shopping list:\n", "chess": "A chess game:\n",
            "yaml-ish": "Ages:\n", "answer": "Is water wet?"}
FORCED = {"arithmetic": "2+2*3 =", "unicode": "A word:"}


# Where two engines' greedy texts part, llama.cpp's own margin between its pick and Lumen's at that
# token must be below this, in nats: a near tie that the engines' arithmetic decides. The engines'
# log-probabilities differ by up to 0.09 nat on the tokens before such a point (SmolLM2, chess.gbnf,
# on an AVX-512 machine: llama.cpp 3 by 0.135 over 2, Lumen 2 by 0.24 over 3, after 16 equal tokens).
NEAR_TIE = 0.25


def assert_same_greedy_text(llama_cpp_server, body, text, name):
    """Lumen's greedy `text` is llama.cpp's under the same request, or parts from it only at a
    near tie of llama.cpp's own."""
    status, llama = post(llama_cpp_server.url.removesuffix("/v1") + "/completion",
                         {"prompt": body["prompt"], "grammar": body["grammar"], "temperature": 0, "n_predict": body["max_tokens"], "n_probs": 5})
    assert status == 200, llama
    if text == llama["content"]:
        return
    offset = 0
    for step in llama["completion_probabilities"]:
        if not text.startswith(step["token"], offset):
            # The first token Lumen did not pick: Lumen's is among llama.cpp's likeliest, nearly as likely.
            rivals = [entry for entry in step["top_logprobs"] if entry["token"] and text.startswith(entry["token"], offset)]
            assert rivals, (name, text, llama["content"], step)
            margin = step["logprob"] - max(entry["logprob"] for entry in rivals)
            assert margin < NEAR_TIE, (name, text, llama["content"], margin)
            return
        offset += len(step["token"])
    raise AssertionError((name, text, llama["content"]))


def test_greedy_output_under_a_grammar_is_llama_cpps(served, llama_cpp_server):
    every = grammars()
    for name, prompt in {**FOLLOWED, **FORCED}.items():
        body = {"prompt": prompt, "grammar": every[name], "temperature": 0, "max_tokens": 48}
        status, lumen = post(served.url + "/completions", body)
        assert status == 200, lumen
        text = lumen["choices"][0]["text"]
        if name in FOLLOWED:
            assert_same_greedy_text(llama_cpp_server, body, text, name)
        # Cut off by max_tokens, the text may already be a sentence (one that could go on) or a prefix of one.
        finished = lumen["choices"][0]["finish_reason"] == "stop"
        assert llama_cpp_verdict(every[name], text) in (("valid",) if finished else ("valid", "prefix")), (name, text)


SCHEMAS = [
    {"type": "object", "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 30}, "age": {"type": "integer", "minimum": 0, "maximum": 120}},
     "required": ["name", "age"]},
    {"type": "array", "items": {"type": "integer", "minimum": -50, "maximum": 50}, "minItems": 2, "maxItems": 5},
    {"type": "object", "properties": {"colour": {"enum": ["red", "green", "blue"]}, "shade": {"const": "dark"}, "alpha": {"type": "number"}},
     "required": ["colour", "shade"]},
    {"type": "object", "properties": {"id": {"type": "string", "pattern": "^[A-Z]{2}-[0-9]{3}$"}, "when": {"type": "string", "format": "date"}},
     "required": ["id", "when"]},
    {"anyOf": [{"type": "object", "properties": {"cat": {"type": "string", "maxLength": 12}}, "required": ["cat"]},
               {"type": "object", "properties": {"dog": {"type": "boolean"}}, "required": ["dog"]}]},
    {"$defs": {"item": {"type": "object", "properties": {"title": {"type": "string", "maxLength": 20}, "done": {"type": "boolean"}},
                        "required": ["title", "done"]}},
     "type": "object", "properties": {"todo": {"type": "array", "items": {"$ref": "#/$defs/item"}, "minItems": 1, "maxItems": 3}}, "required": ["todo"]},
    {"type": "object", "properties": {"point": {"type": "array", "prefixItems": [{"type": "number"}, {"type": "number"}], "items": False},
                                      "label": {"type": ["string", "null"], "maxLength": 10}},
     "required": ["point", "label"]},
    {"type": "object", "properties": {"tags": {"type": "array", "items": {"type": "string", "maxLength": 8}, "maxItems": 4},
                                      "score": {"type": "integer", "exclusiveMinimum": 0, "maximum": 10}, "note": {"type": "string", "maxLength": 15}},
     "required": ["score"]},
    {"type": "object", "properties": {"price": {"type": "number", "minimum": 0.5, "exclusiveMaximum": 99.95},
                                      "delta": {"type": "number", "minimum": -1.25, "maximum": 1.25}, "rate": {"type": "number", "exclusiveMinimum": 0}},
     "required": ["price", "delta", "rate"]},
]


@pytest.mark.parametrize("model", ["smollm2", "gemma3"])
def test_json_from_many_schemas_and_seeds_validates(model, request):
    server = request.getfixturevalue("served" if model == "smollm2" else "served_gemma")
    for index, schema in enumerate(SCHEMAS):
        for seed in (1, 2):
            body = {"messages": [{"role": "user", "content": "Answer with JSON."}], "temperature": 0.8, "seed": seed, "max_tokens": 300,
                    "response_format": {"type": "json_schema", "json_schema": {"name": f"s{index}", "schema": schema}}}
            status, answer = post(server.url + "/chat/completions", body)
            assert status == 200, answer
            choice = answer["choices"][0]
            text = choice["message"]["content"]
            assert choice["finish_reason"] == "stop", (index, seed, text)
            jsonschema.validate(json.loads(text), schema)
    # Any JSON object, and a schema whose properties come out in the schema's order.
    status, answer = post(server.url + "/chat/completions", {"messages": [{"role": "user", "content": "Reply with a JSON object with one key, ok, set to true."}], "temperature": 0,
                                                             "max_tokens": 200, "response_format": {"type": "json_object"}})
    assert status == 200 and isinstance(json.loads(answer["choices"][0]["message"]["content"]), dict), answer
    ordered = {"type": "object", "properties": {"zulu": {"type": "integer"}, "alpha": {"type": "integer"}, "mike": {"type": "integer"}},
               "required": ["zulu", "alpha", "mike"]}
    status, answer = post(server.url + "/completions", {"prompt": "Numbers:", "temperature": 0, "max_tokens": 60, "json_schema": ordered})
    assert status == 200, answer
    assert list(json.loads(answer["choices"][0]["text"])) == ["zulu", "alpha", "mike"]


def test_regex_and_choice_in_cells_on_both_models():
    patterns = [r"\(\d{3}\) \d{3}-\d{4}", r"[A-Z][a-z]{2,6}( [A-Z][a-z]{2,6})?", r"(yes|no), because [a-z ]{5,20}\."]
    code = "".join(f'let m{name} = load("{path.name}")\n' for name, path in (("s", SMOLLM2), ("g", GEMMA)))
    for model in ("ms", "mg"):
        for index, pattern in enumerate(patterns):
            for seed in (1, 2, 3):
                code += f'print("R{index}|" + generate({model}, "Write it:", regex: {json.dumps(pattern)}, seed: {seed}, maxTokens: 60).text + "|")\n'
        code += f'print("C|" + generate({model}, "The capital of France is", choice: ["Paris", "Lyon", "Marseille"], temperature: 0).text + "|")\n'
    result = lumen_script(code)
    assert result.returncode == 0, result.stderr
    outputs = re.findall(r"^(R\d|C)\|(.*?)\|$", result.stdout, re.MULTILINE | re.DOTALL)
    assert len(outputs) == 2 * (3 * len(patterns) + 1), result.stdout
    for tag, text in outputs:
        if tag == "C":
            assert text in ("Paris", "Lyon", "Marseille"), text
        else:
            assert re.fullmatch(patterns[int(tag[1])], text), (tag, text)


def test_command_line_takes_llama_cpps_flags_and_locates_mistakes(tmp_path):
    schema = {"type": "object", "properties": {"city": {"type": "string", "maxLength": 20}, "people": {"type": "integer", "minimum": 0}},
              "required": ["city", "people"]}
    result = subprocess.run([lumen_bin(), "generate", str(SMOLLM2), "A city as JSON:", "-j", json.dumps(schema), "--temp", "0", "-n", "80"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    jsonschema.validate(json.loads(result.stdout), schema)
    (tmp_path / "list.gbnf").write_text(grammars()["list"])
    result = subprocess.run([lumen_bin(), "generate", str(SMOLLM2), "Groceries:\n", "--grammar-file", str(tmp_path / "list.gbnf"), "--temp", "0.7",
                             "--seed", "4", "-n", "40", "--json"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert llama_cpp_verdict(grammars()["list"], report["text"]) in (("valid",) if report["finish_reason"] == "stop" else ("valid", "prefix")), report
    (tmp_path / "bad.gbnf").write_text('root ::= item+\n\nitem ::= "- " [a-z+ "\\n"\n')
    result = subprocess.run([lumen_bin(), "generate", str(SMOLLM2), "x", "--grammar-file", str(tmp_path / "bad.gbnf")], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert f"{tmp_path / 'bad.gbnf'}: grammar, line 3, column 15: character class is not closed with ]" in result.stderr
    result = subprocess.run([lumen_bin(), "generate", str(SMOLLM2), "x", "-j", '{"type": "object", "properties": {"a": {"not": {}}}}'],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1 and 'JSON schema at /properties/a/not: keyword "not" is not supported' in result.stderr
    result = subprocess.run([lumen_bin(), "generate", str(SMOLLM2), "x", "-j", "{}", "--grammar", 'root ::= "a"'], capture_output=True, text=True, timeout=60)
    assert result.returncode == 64 or "give one of --grammar" in result.stderr


def test_serve_refuses_constraints_it_cannot_follow_naming_the_field(served):
    cases = [({"grammar": 'root ::= "a" b'}, "grammar", 'grammar, line 1, column 14: rule "b" is used but not defined'),
             ({"response_format": {"type": "json_schema", "json_schema": {"schema": {"type": "object", "patternProperties": {}}}}},
              "response_format", 'keyword "patternProperties" is not supported'),
             ({"response_format": {"type": "xml"}}, "response_format", "must be text, json_object or json_schema"),
             ({"grammar": 'root ::= "a"', "json_schema": {"type": "string"}}, "json_schema", "both constrain the output"),
             ({"grammar": 'root ::= <nothink>'}, "grammar", "<nothink> is not a single token of the model's vocabulary")]
    for fields, param, message in cases:
        status, answer = post(served.url + "/completions", {"prompt": "x", "max_tokens": 4, **fields})
        assert status == 400, answer
        assert answer["error"]["param"] == param and message in answer["error"]["message"], answer


def test_connect_passes_the_constraint_to_lumen_serve_and_llama_cpp(served, llama_cpp_server):
    schema = {"type": "object", "properties": {"fruit": {"enum": ["apple", "pear"]}, "count": {"type": "integer", "minimum": 1, "maximum": 9}},
              "required": ["fruit", "count"]}
    for server in (served, llama_cpp_server):
        result = lumen_script(f'''let r = connect("{server.url}")
print("J|" + generate(r, "A fruit as JSON:", json: {json.dumps(schema).replace("{", "[").replace("}", "]")}, temperature: 0, maxTokens: 60).text + "|")
print("C|" + generate(r, "Pick one:", choice: ["left", "right"], temperature: 0.9, seed: 5).text + "|")
''')
        assert result.returncode == 0, result.stderr
        found = dict(re.findall(r"^(J|C)\|(.*?)\|$", result.stdout, re.MULTILINE | re.DOTALL))
        jsonschema.validate(json.loads(found["J"]), schema)
        assert found["C"] in ("left", "right"), found
