"""A model's reasoning told from its reply — Qwen3.5's `<think>` blocks and gpt-oss's harmony
channels — by `lumen serve` as llama.cpp's own llama-server tells them (`reasoning_content`), and
in cells and `lumen chat`. The synthetic models (make synthetic-models) run with the families' real
chat templates (../shared/reference/templates/); a grammar makes each output the same text on both
servers whatever the random weights, so the split is what is compared."""
import json
import os
import pathlib
import subprocess

import pytest

from conftest import lumen_bin
from servers import start_llama_cpp_server, start_lumen_serve_of
from test_chat import jinja2_render
from test_remote import SHARED, lumen_script, post

SYNTHETIC = pathlib.Path(os.environ.get("LUMEN_SYNTHETIC_MODELS", ".build/synthetic-models")).absolute()
TEMPLATES = SHARED / "reference/templates"
FAMILIES = {
    "qwen35": ("Qwen3.5-4B.jinja", [
        "  Two and two.  \n\n</think>\n\n  Four.  \n",  # white space around both parts
        "Still thinking and thinking",                  # cut off inside the reasoning
        "\n\nA</think>B</think>C",                      # only the first end marker ends it
        "<think>inner</think>\n\nrest",                 # a start marker inside the open block
    ]),
    "gptoss": ("openai-gpt-oss-120b.jinja", [
        "<|channel|>analysis<|message|>Think.  \n<|end|><|start|>assistant<|channel|>final<|message|>Four.",
        "<|channel|>analysis<|message|>Still thinking",
        "<|channel|>final<|message|>Just four.",        # no analysis: the final channel's header is not the reply
    ]),
}


@pytest.fixture(scope="module", params=sorted(FAMILIES))
def servers(request):
    """`lumen serve` and llama-server on one synthetic model with its family's template."""
    model, (template, _) = SYNTHETIC / f"{request.param}.gguf", FAMILIES[request.param]
    lumen = start_lumen_serve_of(model, "--chat-template-file", str(TEMPLATES / template), "--threads", "1")
    try:
        llama = start_llama_cpp_server("--chat-template-file", str(TEMPLATES / template), model=model)
    except BaseException:
        lumen.stop()
        raise
    yield request.param, lumen, llama
    lumen.stop()
    llama.stop()


def ask(server, output, stream=False, **extra):
    """The answer to one user message when the output is `output` (a grammar allows only it)."""
    body = {"messages": [{"role": "user", "content": "What is two and two?"}], "max_tokens": 48, "temperature": 0,
            "grammar": "root ::= " + json.dumps(output), "stream": stream, **extra}
    if not stream:
        status, answer = post(server.url + "/chat/completions", body)
        assert status == 200, answer
        return answer["choices"][0]["message"]
    import urllib.request
    request = urllib.request.Request(server.url + "/chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        events = [json.loads(line[6:]) for line in response.read().decode().splitlines() if line.startswith("data: {")]
    return [event["choices"][0]["delta"] for event in events if event["choices"]]


def joined(deltas, field):
    return "".join(delta.get(field) or "" for delta in deltas)


def test_reasoning_content_is_llama_servers_whole_and_streamed(servers):
    family, lumen, llama = servers
    for output in FAMILIES[family][1]:
        expected = ask(llama, output)
        assert ask(lumen, output) == expected, output
        deltas, reference = ask(lumen, output, stream=True), ask(llama, output, stream=True)
        for field in ("content", "reasoning_content"):
            assert joined(deltas, field) == joined(reference, field) == (expected.get(field) or ""), (output, field)
        # The reasoning streams before the reply.
        kinds = [field for delta in deltas for field in ("reasoning_content", "content") if delta.get(field)]
        assert kinds == sorted(kinds, key=lambda kind: kind == "content"), kinds


def test_thinking_switched_off_and_reasoning_left_in_the_content_as_llama_server_does(servers):
    """`chat_template_kwargs` reach the template (Qwen3.5's closes the reasoning block when
    thinking is off; gpt-oss's has no switch), and `reasoning_format: none` leaves the reasoning in
    the content, from where the prompt opened it."""
    family, lumen, llama = servers
    off = {"chat_template_kwargs": {"enable_thinking": False}}
    # (Output outside harmony's channels is a 500 from llama-server; Lumen returns it as the reply.)
    for output in FAMILIES[family][1][:1] + (["Four. <think>x</think> y"] if family == "qwen35" else []):
        assert ask(lumen, output, **off) == ask(llama, output, **off), output
        assert ask(lumen, output, reasoning_format="none") == ask(llama, output, reasoning_format="none"), output
    if family == "qwen35":
        assert ask(lumen, "Four. <think>x</think> y", **off) == {"role": "assistant", "content": "Four. <think>x</think> y"}
        assert ask(lumen, "Two.\n</think>\n\nFour.", reasoning_format="none")["content"] == "<think>\nTwo.\n</think>\n\nFour."
    status, refusal = post(lumen.url + "/chat/completions", {"messages": [{"role": "user", "content": "x"}], "reasoning_format": "sideways"})
    assert status == 400 and refusal["error"]["param"] == "reasoning_format", refusal


def test_a_conversation_in_cells_keeps_the_reasoning_apart_and_renders_it_as_jinja2_does():
    """The reply's reasoning is `reply.reasoning` and its message's, streamed dimmed; the next
    prompt renders it (and `thinking: false`) as jinja2 renders the template."""
    template = (TEMPLATES / "Qwen3.5-4B.jinja").read_text()
    grammar = 'root ::= "Two and two.\\n</think>\\n\\nFour."'
    result = lumen_script(f'''let m = load("{SYNTHETIC / "qwen35.gguf"}")
let chat = conversation(m, template: {json.dumps(template)})
let reply = say(chat, "What is two and two?", maxTokens: 32, temperature: 0, grammar: {json.dumps(grammar)})
print(json(["reasoning": reply.reasoning, "text": reply.text, "message": chat.messages[1]]))
let again = say(chat, "And three and three?", maxTokens: 2, temperature: 0)
let off = conversation(m, template: {json.dumps(template)}, thinking: false)
let next = say(off, "And three and three?", maxTokens: 8, temperature: 0, grammar: "root ::= \\"Six.\\"")
print(json(["reasoning": next.reasoning, "text": next.text]))
print(json(["again": again.prompt, "off": next.prompt]))
''')
    assert result.returncode == 0, result.stderr
    first, second, prompts = (json.loads(line) for line in result.stdout.splitlines() if line.startswith("{"))
    assert first == {"reasoning": "Two and two.\n", "text": "Four.",
                     "message": {"role": "assistant", "content": "Four.", "reasoning": "Two and two.\n"}}
    assert second == {"reasoning": None, "text": "Six."}
    # Streamed: the reasoning dimmed (ANSI faint italic), then the reply.
    assert "\x1b[2;3mTwo and two.\n\x1b[22;23mFour." in result.stdout
    history = [{"role": "user", "content": "What is two and two?"},
               {"role": "assistant", "content": "Four.", "reasoning_content": "Two and two.\n"},
               {"role": "user", "content": "And three and three?"}]
    assert prompts["again"] == jinja2_render(template, history, True)
    assert prompts["off"] == jinja2_render(template, history[2:], True, enable_thinking=False)


def test_thinking_is_refused_where_the_template_has_no_switch():
    result = lumen_script(f'''let m = load("{SYNTHETIC / "qwen35.gguf"}")
let chat = conversation(m, thinking: true)
''')
    assert "thinking: needs a chat template that reads enable_thinking" in result.stdout + result.stderr


def test_lumen_chat_prints_the_reasoning_before_the_reply_and_switches_thinking():
    template = str(TEMPLATES / "Qwen3.5-4B.jinja")
    model = str(SYNTHETIC / "qwen35.gguf")
    result = subprocess.run([lumen_bin(), "chat", model, "--template", template, "--grammar", 'root ::= "A thought.\\n</think>\\n\\nB."',
                             "--temp", "0", "-n", "20", "--no-log"], input="What is it?\n", capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("A thought.\nB.\n"), result.stdout
    off = subprocess.run([lumen_bin(), "chat", model, "--template", template, "--reasoning", "off", "--grammar", 'root ::= "Six."',
                          "--temp", "0", "-n", "4", "--no-log"], input="And now?\n", capture_output=True, text=True, timeout=120)
    assert off.returncode == 0 and off.stdout.startswith("Six.\n"), off.stderr
    refused = subprocess.run([lumen_bin(), "chat", model, "--reasoning", "on", "--no-log"], input="x\n", capture_output=True, text=True, timeout=120)
    assert refused.returncode != 0 and "the chat template has no thinking switch (enable_thinking)" in refused.stderr
