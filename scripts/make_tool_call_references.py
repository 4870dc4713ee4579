#!/usr/bin/env python3
"""Makes llama-server (`--jinja`) references for Lumen's tool calls, with the chat templates of
../shared/reference/templates and a model whose outputs do not matter (SmolLM2):

- `renders`: for each template and conversation below (tools offered; a history with an
  assistant's tool calls and the tools' answers), the prompt llama-server's `/apply-template`
  renders, with the time it rendered at (templates print the date), or its refusal when the
  template raises an exception on the conversation;
- `parses`: for each template and reply text below, the message llama-server parses from it:
  the text is sent as a last assistant message that llama-server continues, with the end of
  generation forced at once (`logit_bias`), so the reply it parses is exactly that text
  (`parallel_tool_calls` on, as OpenAI's default is, where llama-server's follows the template).

Usage: make_tool_call_references.py LLAMA_SERVER MODEL_GGUF TEMPLATES_DIR OUT_JSON"""
import json
import pathlib
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Get the weather for a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}},
                   "required": ["city"]}}}
TIME = {"type": "function", "function": {
    "name": "get_time", "description": "The time now in a time zone",
    "parameters": {"type": "object", "properties": {"zone": {"type": "string"}, "precise": {"type": "boolean"}}, "required": ["zone"]}}}
TOOLS = [WEATHER, TIME]
QUESTION = {"role": "user", "content": "What is the weather in Paris, and the time in Tokyo?"}
CONVERSATIONS = [
    [QUESTION],
    [QUESTION,
     {"role": "assistant", "content": "", "tool_calls": [
         {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
     {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "{\"temperature\": 21}"}],
    [{"role": "system", "content": "Be brief."}, QUESTION,
     {"role": "assistant", "content": "Checking both.", "tool_calls": [
         {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\", \"unit\": \"celsius\"}"}},
         {"id": "call_2", "type": "function", "function": {"name": "get_time", "arguments": "{\"zone\": \"Asia/Tokyo\", \"precise\": true}"}}]},
     {"role": "tool", "tool_call_id": "call_1", "name": "get_weather", "content": "21 degrees"},
     {"role": "tool", "tool_call_id": "call_2", "name": "get_time", "content": "09:30"},
     {"role": "assistant", "content": "21 degrees in Paris; 09:30 in Tokyo."},
     {"role": "user", "content": "Thanks!"}],
]
HERMES_REPLIES = [
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
    "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"unit\": \"celsius\"}}\n</tool_call>",
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>\n"
    "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zone\": \"Asia/Tokyo\", \"precise\": true}}\n</tool_call>",
    "<tool_call>\n{\"name\":\"get_time\",\"arguments\":{\"zone\" :  \"UTC\"}}\n</tool_call>",
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Par",
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"{nested} \\\"quoted\\\"\", \"unit\": \"celsius\"}}\n</tool_call>",
    "No tools needed: it is sunny.",
]
LLAMA3_REPLIES = [
    "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Paris\"}}",
    "Sure: {\"name\": \"get_time\", \"parameters\": {\"zone\": \"Asia/Tokyo\", \"precise\": false}}",
    "{\"name\": \"get_weather\", \"parameters\": {\"city\": \"Pa",
    "It is sunny in Paris.",
]
GEMMA4_REPLIES = [
    "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>}<tool_call|>",
    "Checking.<|tool_call>call:get_time{precise:true,zone:<|\"|>Asia/Tokyo<|\"|>}<tool_call|>",
    "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,unit:<|\"|>celsius<|\"|>}<tool_call|>"
    "<|tool_call>call:get_time{zone:<|\"|>UTC<|\"|>}<tool_call|>",
    "<|tool_call>call:get_weather{city:<|\"|>Paris, \"FR\" {x}<|\"|>, days: 3, when:{from:-1.5e2,to:null}, tags:[<|\"|>a<|\"|>, 2, []]}<tool_call|>",
    "<|tool_call>call:get_weather{city:<|\"|>Par",
    "It is sunny in Paris.",
]
QWEN_XML_REPLIES = [
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>\n</tool_call>",
    "Let me check.\n\n<tool_call>\n<function=get_time>\n<parameter=zone>\nAsia/Tokyo\n</parameter>\n<parameter=precise>\ntrue\n</parameter>\n</function>\n</tool_call>",
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nSan\nFrancisco \"CA\"\n</parameter>\n<parameter=unit>\ncelsius\n</parameter>\n</function>\n</tool_call>\n"
    "<tool_call>\n<function=get_time>\n<parameter=zone>\nUTC\n</parameter>\n<parameter=precise>\nfalse\n</parameter>\n</function>\n</tool_call>",
    "<tool_call>\n<function=get_weather>\n<parameter=city>\nPar",
    "It is sunny in Paris.",
]
TEMPLATES = {
    "Qwen-Qwen3-0.6B.jinja": HERMES_REPLIES,
    "Qwen-Qwen2.5-7B-Instruct.jinja": HERMES_REPLIES,
    "NousResearch-Hermes-2-Pro-Llama-3-8B-tool_use.jinja": HERMES_REPLIES,
    "meta-llama-Llama-3.2-3B-Instruct.jinja": LLAMA3_REPLIES,
    "meta-llama-Llama-3.1-8B-Instruct.jinja": LLAMA3_REPLIES,
    # Harmony replies continue a rendered message in another way; they are checked against the
    # template's own rendering of tool calls (`renders`) instead.
    "openai-gpt-oss-120b.jinja": [],
    "google-gemma-4-31B-it.jinja": GEMMA4_REPLIES,
    "Qwen3.5-4B.jinja": QWEN_XML_REPLIES,
}


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def post(port, path, body):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=120) as response:
        return json.load(response)


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as response:
        return json.load(response)


def main(server, model, templates, out):
    result = {"model": pathlib.Path(model).name, "renders": {}, "parses": {}}
    for name, replies in TEMPLATES.items():
        port = free_port()
        process = subprocess.Popen([server, "-m", model, "--jinja", "--chat-template-file", str(pathlib.Path(templates) / name),
                                    "--port", str(port), "-np", "1", "-c", "4096", "-t", "2"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            for _ in range(600):
                try:
                    if get(port, "/health").get("status") == "ok":
                        break
                except (urllib.error.URLError, ConnectionError):
                    pass
                time.sleep(0.1)
            props = get(port, "/props")
            result["bos_token"], result["eos_token"] = props["bos_token"], props["eos_token"]
            renders = []
            for conversation in CONVERSATIONS:
                now = int(time.time())
                try:
                    renders.append({"now": now, "prompt": post(port, "/apply-template", {"messages": conversation, "tools": TOOLS})["prompt"]})
                except urllib.error.HTTPError as error:
                    # The template refuses the conversation (raise_exception): Lumen must too.
                    renders.append({"now": now, "refused": json.load(error)["error"]["message"]})
            result["renders"][name] = renders
            parses = []
            eos = post(port, "/tokenize", {"content": props["eos_token"], "parse_special": True})["tokens"][0]
            for reply in replies:
                body = {"messages": [QUESTION, {"role": "assistant", "content": reply}], "tools": TOOLS, "parallel_tool_calls": True, "max_tokens": 2,
                        "temperature": 0, "logit_bias": [[eos, 100]]}
                message = post(port, "/v1/chat/completions", body)["choices"][0]["message"]
                parses.append({"reply": reply, "content": message.get("content") or "",
                               "tool_calls": [{"name": call["function"]["name"], "arguments": call["function"]["arguments"]}
                                              for call in message.get("tool_calls") or []]})
            result["parses"][name] = parses
        finally:
            process.terminate()
            process.wait()
    result["conversations"], result["tools"] = CONVERSATIONS, TOOLS
    pathlib.Path(out).write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:])
