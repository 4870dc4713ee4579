"""Tool calls in `lumen serve`, against llama.cpp's own `llama-server --jinja` on SmolLM2 with the
same chat templates (../shared/reference/templates): a conversation with tools, tool calls and
the tools' answers makes the same prompt in both servers; with `tool_choice` required or a named
function, every call the `openai` client reads, whole or streamed, names an offered function and
its arguments validate against that function's schema (`jsonschema`); the stream's pieces add up
to the whole answer; what cannot be met is a 400 naming the field.

The byte-for-byte renderings and llama-server's parse of each syntax are compared in the Swift
suite (ToolCallTests); here the servers run end to end."""
import json
import os
import pathlib
import urllib.request

import jsonschema
import pytest

from servers import CACHE, SMOLLM2, start_llama_cpp_server, start_lumen_serve, start_lumen_serve_of
from test_remote import post

TEMPLATES = pathlib.Path(os.environ.get("LUMEN_TEST_DATA", "")) / "reference" / "templates"
SYNTHETIC = pathlib.Path(os.environ.get("LUMEN_SYNTHETIC_MODELS", ".build/synthetic-models")).absolute()
GEMMA3 = CACHE / "gemma-3-270m-q4_k_m.gguf"
QWEN3 = TEMPLATES / "Qwen-Qwen3-0.6B.jinja"
MODEL = SMOLLM2.stem
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string", "maxLength": 24}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                   "required": ["city"]}}}
TIME = {"type": "function", "function": {
    "name": "get_time", "description": "The time now in a time zone",
    "parameters": {"type": "object", "properties": {"zone": {"type": "string", "maxLength": 40}, "precise": {"type": "boolean"}},
                   "required": ["zone"]}}}
TOOLS = [WEATHER, TIME]
SCHEMAS = {tool["function"]["name"]: tool["function"]["parameters"] for tool in TOOLS}
QUESTION = {"role": "user", "content": "What is the weather in Paris?"}
HISTORY = [
    QUESTION,
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
    {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "{\"temperature\": 21}"},
]


@pytest.fixture(scope="module")
def lumen():
    """`lumen serve` on SmolLM2 with Qwen 3's chat template (Hermes `<tool_call>` syntax)."""
    server = start_lumen_serve("--chat-template-file", str(QWEN3))
    yield server
    server.stop()


def validated(calls):
    """`calls` (the client's objects) as (name, arguments) pairs, each checked against its schema."""
    pairs = []
    for call in calls:
        assert call.type == "function" and call.id.startswith("call_"), call
        arguments = json.loads(call.function.arguments)
        jsonschema.validate(arguments, SCHEMAS[call.function.name])
        pairs.append((call.function.name, arguments))
    return pairs


@pytest.mark.parametrize("model, template", [
    (SMOLLM2, "Qwen-Qwen3-0.6B.jinja"), (SMOLLM2, "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja"),
    (SMOLLM2, "meta-llama-Llama-3.2-3B-Instruct.jinja"), (SMOLLM2, "openai-gpt-oss-120b.jinja"), (GEMMA3, "google-gemma-4-31B-it.jinja"),
    # The families' own vocabularies, whose markers (<tool_call>, <|channel|>, <|tool_call>) are special tokens.
    (SYNTHETIC / "qwen3.gguf", "Qwen-Qwen3-0.6B.jinja"), (SYNTHETIC / "gptoss.gguf", "openai-gpt-oss-120b.jinja"),
    (SYNTHETIC / "llama3.gguf", "meta-llama-Llama-3.2-3B-Instruct.jinja"), (SYNTHETIC / "gemma4.gguf", "google-gemma-4-31B-it.jinja"),
    (SYNTHETIC / "qwen35.gguf", "Qwen3.5-4B.jinja"),
], ids=lambda value: value if isinstance(value, str) else value.stem)
def test_a_conversation_with_tools_makes_llama_servers_prompt(model, template):
    """Tools offered, an assistant's call and the tool's answer: the same prompt tokens in both
    servers (the template prints the date; both render it from today). The reply is ended at once
    (its end-of-generation token favoured), as llama-server refuses to answer with a synthetic
    model's random text that its harmony parser cannot read."""
    lumen = start_lumen_serve_of(model, "--chat-template-file", str(TEMPLATES / template), "--threads", "1")
    llama = start_llama_cpp_server("--jinja", "--chat-template-file", str(TEMPLATES / template), model=model)
    try:
        with urllib.request.urlopen(llama.url.removesuffix("/v1") + "/props", timeout=60) as response:
            properties = json.load(response)
        _, tokens = post(llama.url.removesuffix("/v1") + "/tokenize", {"content": properties["eos_token"], "parse_special": True})
        for messages in ([QUESTION], HISTORY):
            body = {"model": model.stem, "messages": messages, "tools": TOOLS, "max_tokens": 1, "temperature": 0, "logit_bias": [[tokens["tokens"][0], 100]]}
            counts = []
            for server in (lumen, llama):
                status, answer = post(server.url + "/chat/completions", body)
                assert status == 200, answer
                counts.append(answer["usage"]["prompt_tokens"])
            assert counts[0] == counts[1], (template, len(messages))
            assert counts[0] > 100, "the tools are in the prompt"
    finally:
        lumen.stop()
        llama.stop()


def test_required_calls_validate_whole_and_streamed_through_the_openai_client(lumen):
    import openai
    client = openai.OpenAI(base_url=lumen.url, api_key="unused")
    request = {"model": MODEL, "messages": [QUESTION], "tools": TOOLS, "tool_choice": "required", "parallel_tool_calls": False,
               "max_tokens": 80, "temperature": 0}
    whole = client.chat.completions.create(**request)
    choice = whole.choices[0]
    assert choice.finish_reason == "tool_calls" and not choice.message.content
    calls = validated(choice.message.tool_calls)
    assert len(calls) == 1

    names, arguments, ids, finish = {}, {}, {}, None
    for chunk in client.chat.completions.create(stream=True, **request):
        for piece in chunk.choices[0].delta.tool_calls or []:
            if piece.id:
                ids[piece.index] = piece.id
            if piece.function.name:
                names[piece.index] = piece.function.name
            arguments[piece.index] = arguments.get(piece.index, "") + (piece.function.arguments or "")
        finish = chunk.choices[0].finish_reason or finish
    assert finish == "tool_calls"
    assert [(names[index], json.loads(arguments[index])) for index in sorted(names)] == calls
    assert all(identifier.startswith("call_") for identifier in ids.values())

    # Several calls when parallel calls are allowed: each whole one validates.
    several = client.chat.completions.create(**{**request, "parallel_tool_calls": True, "max_tokens": 120})
    complete = [call for call in several.choices[0].message.tool_calls if call.function.arguments.endswith("}")]
    assert len(validated(complete)) >= 1


@pytest.mark.parametrize("template", ["meta-llama-Llama-3.2-3B-Instruct.jinja", "openai-gpt-oss-120b.jinja", "google-gemma-4-31B-it.jinja",
                                      "Qwen3.5-4B.jinja"])
def test_every_syntax_makes_calls_that_validate(template):
    """Llama 3's JSON, harmony, Gemma 4's values and Qwen 3.5's XML parameters: a required call
    and a named one, whole and streamed, read back as arguments valid against the schema."""
    import openai
    server = start_lumen_serve("--chat-template-file", str(TEMPLATES / template))
    try:
        client = openai.OpenAI(base_url=server.url, api_key="unused")
        for choice in ("required", {"type": "function", "function": {"name": "get_time"}}):
            request = {"model": MODEL, "messages": [QUESTION], "tools": TOOLS, "tool_choice": choice, "parallel_tool_calls": False,
                       "max_tokens": 80, "temperature": 0}
            whole = client.chat.completions.create(**request)
            assert whole.choices[0].finish_reason == "tool_calls", (template, whole)
            calls = validated(whole.choices[0].message.tool_calls)
            assert len(calls) == 1 and (choice == "required" or calls[0][0] == "get_time"), calls
            pieces = [piece for chunk in client.chat.completions.create(stream=True, **request) for piece in chunk.choices[0].delta.tool_calls or []]
            assert [(piece.function.name, json.loads(piece.function.arguments)) for piece in pieces] == calls
    finally:
        server.stop()


def test_a_named_function_is_the_one_called_and_the_conversation_goes_on(lumen):
    import openai
    client = openai.OpenAI(base_url=lumen.url, api_key="unused")
    answer = client.chat.completions.create(model=MODEL, messages=[QUESTION], tools=TOOLS, max_tokens=60, temperature=0,
                                            tool_choice={"type": "function", "function": {"name": "get_time"}})
    calls = validated(answer.choices[0].message.tool_calls)
    assert [name for name, _ in calls] == ["get_time"] and answer.choices[0].finish_reason == "tool_calls"

    # The call and the tool's answer go back; the model answers in text (tool_choice none).
    call = answer.choices[0].message.tool_calls[0]
    messages = [QUESTION, {"role": "assistant", "content": None, "tool_calls": [call.model_dump()]},
                {"role": "tool", "tool_call_id": call.id, "content": "09:30"}]
    reply = client.chat.completions.create(model=MODEL, messages=messages, tools=TOOLS, tool_choice="none", max_tokens=12, temperature=0)
    assert reply.choices[0].message.content and not reply.choices[0].message.tool_calls
    assert reply.usage.prompt_tokens > answer.usage.prompt_tokens


def test_auto_lets_the_model_answer_in_text(lumen):
    status, whole = post(lumen.url + "/chat/completions", {"model": MODEL, "messages": [QUESTION], "tools": TOOLS, "max_tokens": 16, "temperature": 0})
    assert status == 200, whole
    message = whole["choices"][0]["message"]
    assert message["content"] and "tool_calls" not in message and whole["choices"][0]["finish_reason"] == "length"


@pytest.mark.parametrize("fields, param, message", [
    ({"tool_choice": {"type": "function", "function": {"name": "get_news"}}}, "tool_choice", "names the function 'get_news', which tools does not offer"),
    ({"tool_choice": "always"}, "tool_choice", "tool_choice must be"),
    ({"response_format": {"type": "json_object"}}, "response_format", "constrains the output, which tools may call instead"),
    ({"tools": [{"type": "function", "function": {"name": "get weather"}}]}, "tools", "tools[0].function.name must be 1 to 64 letters"),
    ({"tools": [WEATHER, WEATHER]}, "tools", "tools[1] names the function 'get_weather' a second time"),
    ({"tools": [{"type": "retrieval"}]}, "tools", "tools[0] must be an object of type \"function\""),
    ({"tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {"x": {"not": {"type": "string"}}}}}}],
      "tool_choice": "required"}, "tools", "/properties/x"),
])
def test_what_cannot_be_met_is_a_400_naming_the_field(lumen, fields, param, message):
    status, answer = post(lumen.url + "/chat/completions", {"model": MODEL, "messages": [QUESTION], "tools": TOOLS, "max_tokens": 4, **fields})
    assert status == 400, answer
    assert answer["error"]["param"] == param and message in answer["error"]["message"], answer


def test_a_template_without_tools_cannot_be_made_to_call_one():
    """SmolLM2's own template describes no tools: `auto` answers in text, `required` is refused."""
    server = start_lumen_serve()
    try:
        status, answer = post(server.url + "/chat/completions", {"model": MODEL, "messages": [QUESTION], "tools": TOOLS, "max_tokens": 4})
        assert status == 200 and "tool_calls" not in answer["choices"][0]["message"], answer
        status, answer = post(server.url + "/chat/completions", {"model": MODEL, "messages": [QUESTION], "tools": TOOLS, "tool_choice": "required"})
        assert status == 400 and answer["error"]["param"] == "tool_choice" and "describes no tools" in answer["error"]["message"], answer
    finally:
        server.stop()
