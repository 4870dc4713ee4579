"""Tokenizers, chat templates and chat from outside: `lumen tokenize` against llama.cpp's
references, `lumen template` against Python's jinja2 configured as transformers configures it
(so any new template can be checked the same way), and `lumen chat` from a pipe."""
import datetime
import json
import os
import pathlib
import subprocess

import jinja2
import jinja2.ext
import pytest
from jinja2.sandbox import ImmutableSandboxedEnvironment

from conftest import lumen_bin

SHARED = pathlib.Path(os.environ.get("LUMEN_TEST_DATA", ""))
CACHE = pathlib.Path(os.environ.get("LUMEN_MODEL_CACHE", pathlib.Path.home() / ".cache" / "lumen" / "models"))
VOCABULARIES = {
    "llama-bpe": SHARED / "models/vocab/ggml-vocab-llama-bpe.gguf",
    "qwen2": SHARED / "models/vocab/ggml-vocab-qwen2.gguf",
    "gpt-2": SHARED / "models/vocab/ggml-vocab-gpt-2.gguf",
    "deepseek-llm": SHARED / "models/vocab/ggml-vocab-deepseek-llm.gguf",
    "phi-3": SHARED / "models/vocab/ggml-vocab-phi-3.gguf",
    "smollm2": CACHE / "SmolLM2-135M-Instruct.Q4_1.gguf",
    "gemma3": CACHE / "gemma-3-270m-q4_k_m.gguf",
}
NOW = datetime.datetime(2026, 1, 2, 3, 4, 5)


@pytest.mark.parametrize("name", sorted(VOCABULARIES))
def test_tokenize_prints_llama_cpp_ids(name):
    path = VOCABULARIES[name]
    assert path.exists(), f"{path} is missing (make models fetches the real ones)"
    cases = json.loads((SHARED / "reference/tokenizer" / f"{name}.json").read_text())["cases"]
    # The longest cases and one with a special token written in it, read from stdin as bytes.
    chosen = sorted(cases, key=lambda case: len(case["text"]))[-4:]
    for case in chosen:
        text = case["text"].encode()
        ids = subprocess.run([lumen_bin(), "tokenize", str(path), "-", "--json"], input=text, capture_output=True, check=True)
        assert json.loads(ids.stdout) == case["ids"], case["text"]
        plain = subprocess.run([lumen_bin(), "tokenize", str(path), "-", "--plain"], input=text, capture_output=True, check=True)
        assert [int(line) for line in plain.stdout.split()] == case["ids_plain"], case["text"]


def test_tokenize_parses_special_tokens_unless_plain():
    qwen = str(VOCABULARIES["qwen2"])
    special = subprocess.run([lumen_bin(), "tokenize", qwen, "<|im_start|>user", "--json"], capture_output=True, text=True, check=True)
    plain = subprocess.run([lumen_bin(), "tokenize", qwen, "<|im_start|>user", "--json", "--plain"], capture_output=True, text=True, check=True)
    assert json.loads(special.stdout)[0] == 151644
    assert 151644 not in json.loads(plain.stdout)


def jinja2_render(source, messages, add_generation_prompt, bos="<BOS>", eos="<EOS>", **variables):
    """Renders as transformers' apply_chat_template does, with more of the template's `variables`."""
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(value, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    environment = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[jinja2.ext.loopcontrols])
    environment.filters["tojson"] = tojson
    environment.globals["raise_exception"] = raise_exception
    environment.globals["strftime_now"] = lambda fmt: NOW.strftime(fmt)
    return environment.from_string(source).render(messages=messages, add_generation_prompt=add_generation_prompt,
                                                  bos_token=bos, eos_token=eos, tools=None, **variables)


CONVERSATIONS = [
    ([{"role": "system", "content": "Answer in French."}, {"role": "user", "content": "Bonjour — ça va ? 🦙"},
      {"role": "assistant", "content": "Oui.\n\nEt vous ?"}, {"role": "user", "content": "  spaces  \t and {% tags %} "}], True),
    ([{"role": "user", "content": "One"}, {"role": "assistant", "content": "Two"}, {"role": "user", "content": "Three"},
      {"role": "assistant", "content": "Four"}], False),
    ([{"role": "user", "content": ""}], True),
]


@pytest.mark.parametrize("template", sorted(p.name for p in (SHARED / "reference/templates").glob("*.jinja")))
def test_template_renders_as_jinja2_does(template, tmp_path):
    source = (SHARED / "reference/templates" / template).read_text()
    for index, (messages, generation_prompt) in enumerate(CONVERSATIONS):
        path = tmp_path / f"messages{index}.json"
        path.write_text(json.dumps(messages))
        command = [lumen_bin(), "template", str(SHARED / "reference/templates" / template), "--messages", str(path),
                   "--bos-token", "<BOS>", "--eos-token", "<EOS>", "--now", "2026-01-02 03:04:05"]
        if not generation_prompt:
            command.append("--no-generation-prompt")
        result = subprocess.run(command, capture_output=True)
        try:
            expected = jinja2_render(source, messages, generation_prompt)
        except Exception as error:  # jinja2 refuses: lumen must too, with the same kind and message
            assert result.returncode == 1, f"jinja2 refused ({error}) but lumen printed {result.stdout!r}"
            assert f"{type(error).__name__}: {error}" in result.stderr.decode()
            continue
        assert result.returncode == 0, result.stderr.decode()
        assert result.stdout == expected.encode(), f"conversation {index}"


# Dictionaries whose keys are not strings: jinja2 keeps Python's key types, so integer keys sort,
# compare and print as numbers, 1, 1.0 and True are one key, and tojson writes keys as JSON text.
NON_STRING_KEYS = {
    "dictsort": "{% for k, v in {4096: 'big', 0: 'zero', 512: 'mid'} | dictsort %}{{ k }}={{ v }};{% endfor %}",
    "compare": "{% for k, v in {0: 'a', 4096: 'b', 100: 'c'}.items() %}{% if k > 100 %}{{ v }}{% endif %}{% endfor %}",
    "lookup": "{% set sizes = {0: 'none', 1: 'one'} %}{{ sizes[0] }} {{ sizes[1.0] }} {{ sizes[True] }} {{ 0 in sizes }} {{ '0' in sizes }}",
    "repr": "{{ {1: 'a', 'b': 2, 2.5: None, none: true} }}",
    "merge": "{% set d = {1: 'int', 1.0: 'float', true: 'bool'} %}{{ d | length }} {{ d }}",
    "keys": "{% for k in {3: 'x', 1: 'y'} %}{{ k + 1 }} {% endfor %}{{ {2: 'z'}.keys() | list }}",
    "tojson": "{{ {2: 'b', 1: 'a', 1.5: 'c', none: 0, true: 1} | tojson }} {{ {10: 1, 9: 2} | tojson(sort_keys=true) }}",
    "string keys stay": "{{ {'0': 'string'}[0] is defined }} {% for k, v in {'b': 1, 'a': 2} | dictsort %}{{ k }}{{ v }}{% endfor %}",
    "get": "{{ {0: 'zero'}.get(0) }} {{ {0: 'zero'}.get('0', 'none') }} {{ {'a': 1}.get('a') }}",
    "unhashable": "{{ {[1]: 'x'} }}",
    "mixed sort": "{{ {1: 'a', 'b': 2} | dictsort }}",
}


@pytest.mark.parametrize("name", sorted(NON_STRING_KEYS))
def test_dictionaries_with_non_string_keys_render_as_jinja2_does(name, tmp_path):
    source = NON_STRING_KEYS[name]
    template = tmp_path / "template.jinja"
    template.write_text(source)
    messages = tmp_path / "messages.json"
    messages.write_text(json.dumps([{"role": "user", "content": "Hi"}]))
    result = subprocess.run([lumen_bin(), "template", str(template), "--messages", str(messages)], capture_output=True)
    try:
        expected = jinja2_render(source, [{"role": "user", "content": "Hi"}], True)
    except Exception as error:  # jinja2 refuses: lumen must too, with the same kind and message
        assert result.returncode == 1, f"jinja2 refused ({error}) but lumen printed {result.stdout!r}"
        assert f"{type(error).__name__}: {error}" in result.stderr.decode()
        return
    assert result.returncode == 0, result.stderr.decode()
    assert result.stdout.decode() == expected


def test_template_of_a_model_uses_its_tokens(tmp_path):
    path = tmp_path / "messages.json"
    path.write_text(json.dumps([{"role": "user", "content": "Hi"}]))
    qwen = VOCABULARIES["qwen2"]
    result = subprocess.run([lumen_bin(), "template", str(qwen), "--messages", str(path)], capture_output=True, check=True)
    import gguf
    reader = gguf.GGUFReader(str(qwen))
    source = reader.fields["tokenizer.chat_template"].contents()
    tokens = reader.fields["tokenizer.ggml.tokens"].contents()
    bos = tokens[reader.fields["tokenizer.ggml.bos_token_id"].contents()]
    eos = tokens[reader.fields["tokenizer.ggml.eos_token_id"].contents()]
    assert result.stdout == jinja2_render(source, [{"role": "user", "content": "Hi"}], True, bos, eos).encode()


def test_chat_from_a_pipe_answers_each_paragraph_and_reuses_the_cache():
    model = SHARED / "models/stories260K.gguf"
    result = subprocess.run([lumen_bin(), "chat", str(model), "--temp", "0", "-n", "8", "--system", "Tell a story."],
                            input="Once upon a time\nthere was a cat\n\nThe end\n", capture_output=True, text=True, timeout=120, check=True)
    summaries = [line for line in result.stderr.splitlines() if line.startswith("[")]
    assert len(summaries) == 2, result.stderr
    assert "using the built-in chatml format" in result.stderr
    assert "reused" not in summaries[0] and "reused" in summaries[1]
    assert len(result.stdout.strip().splitlines()) >= 2


def test_chat_on_a_terminal_joins_continued_lines_and_quits_on_ctrl_d():
    import pexpect
    model = SHARED / "models/stories260K.gguf"
    child = pexpect.spawn(lumen_bin(), ["chat", str(model), "--temp", "0", "-n", "6"], encoding="utf-8", timeout=60)
    child.expect_exact("> ")
    child.sendline("Once upon \\")
    child.expect_exact("… ")
    child.sendline("a time")
    child.expect(r"\[(\d+) prompt tokens, 6 generated")
    first_prompt = int(child.match.group(1))
    child.expect_exact("> ")
    child.sendline("The end")
    child.expect(r"\[(\d+) prompt tokens, (\d+) reused")
    assert int(child.match.group(2)) > first_prompt // 2
    child.expect_exact("> ")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0


def test_generate_json_with_forced_ids_and_dumped_logits_matches_llama_cpp(tmp_path):
    """Fidelity checked from outside, as reference/README.md prescribes: teacher-forced argmax
    agreement where the top-2 margin exceeds 0.1, and KL(llama.cpp ‖ Lumen) at both positions."""
    import numpy
    reference = json.loads((SHARED / "reference/real/smollm2.json").read_text())
    for case in reference["cases"]:
        dump = tmp_path / "logits.bin"
        result = subprocess.run([lumen_bin(), "generate", str(VOCABULARIES["smollm2"]), case["prompt"], "--temp", "0", "-n",
                                 str(len(case["greedy_ids"])), "--json", "--force-ids", ",".join(map(str, case["greedy_ids"])),
                                 "--dump-logits", str(dump)], capture_output=True, text=True, check=True, timeout=300)
        report = json.loads(result.stdout)
        assert report["prompt_ids"] == case["prompt_ids"]
        steps = [step for step, margin in enumerate(case["top2_margin"]) if margin > 0.1]
        agreeing = sum(report["ids"][step] == case["greedy_ids"][step] for step in steps)
        assert agreeing >= 0.9 * len(steps), (agreeing, len(steps))
        ours = numpy.fromfile(dump, dtype="<f4").reshape(len(case["greedy_ids"]), -1)[:2]
        theirs = numpy.fromfile(SHARED / "reference/real" / case["logits_bin"], dtype="<f4").reshape(2, -1)
        for position in range(2):
            p = numpy.exp(theirs[position] - theirs[position].max()); p /= p.sum()
            q = numpy.exp(ours[position] - ours[position].max()); q /= q.sum()
            kl = float(numpy.sum(p * (numpy.log(p + 1e-30) - numpy.log(q + 1e-30))))
            assert kl <= 0.02 and ours[position].argmax() == theirs[position].argmax(), (position, kl)
