import GGUF
import Tokenizers

/// A chat template Lumen falls back to for a model file that carries none: llama.cpp's built-in
/// formats (`llm_chat_apply_template`, under the same names), written in Jinja, so a Gemma file
/// without a template still gets Gemma's turns instead of ChatML's, which it never saw.
///
/// One table: the first entry whose architectures include the file's (or that names none) and
/// whose tokens the vocabulary all has is chosen. Adding a format is one row.
public struct BuiltinChatTemplate: Sendable {
    /// llama.cpp's name for the format (`gemma`, `llama3`, …).
    public let name: String
    /// The `general.architecture` values it is chosen for; empty: any.
    let architectures: Set<String>
    /// Tokens the vocabulary must have (the format's turn markers).
    let tokens: [String]
    /// The Jinja source, rendering what llama.cpp renders for that name (BOS is added when the
    /// prompt is tokenized, as llama.cpp adds it).
    public let source: String

    /// The formats, in order of preference; ChatML, llama.cpp's own default, comes last.
    public static let all: [BuiltinChatTemplate] = [
        BuiltinChatTemplate(name: "gemma", architectures: ["gemma", "gemma2", "gemma3", "gemma3n"], tokens: ["<start_of_turn>", "<end_of_turn>"], source: """
            {%- set ns = namespace(system='') -%}
            {%- for message in messages -%}
            {%- if message['role'] == 'system' -%}{%- set ns.system = ns.system + (message['content'] | trim) -%}
            {%- else -%}
            {%- set role = 'model' if message['role'] == 'assistant' else message['role'] -%}
            {{- '<start_of_turn>' + role + '\\n' -}}
            {%- if ns.system and role != 'model' -%}{{- ns.system + '\\n\\n' -}}{%- set ns.system = '' -%}{%- endif -%}
            {{- (message['content'] | trim) + '<end_of_turn>\\n' -}}
            {%- endif -%}
            {%- endfor -%}
            {%- if add_generation_prompt -%}{{- '<start_of_turn>model\\n' -}}{%- endif -%}
            """),
        BuiltinChatTemplate(name: "llama3", architectures: ["llama"], tokens: ["<|start_header_id|>", "<|end_header_id|>", "<|eot_id|>"], source: """
            {%- for message in messages -%}
            {{- '<|start_header_id|>' + message['role'] + '<|end_header_id|>\\n\\n' + (message['content'] | trim) + '<|eot_id|>' -}}
            {%- endfor -%}
            {%- if add_generation_prompt -%}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' -}}{%- endif -%}
            """),
        BuiltinChatTemplate(name: "phi3", architectures: ["phi3"], tokens: ["<|user|>", "<|assistant|>", "<|end|>"], source: """
            {%- for message in messages -%}
            {{- '<|' + message['role'] + '|>\\n' + message['content'] + '<|end|>\\n' -}}
            {%- endfor -%}
            {%- if add_generation_prompt -%}{{- '<|assistant|>\\n' -}}{%- endif -%}
            """),
        BuiltinChatTemplate(name: "chatml", architectures: [], tokens: [], source: """
            {%- for message in messages -%}
            {{- '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>\\n' -}}
            {%- endfor -%}
            {%- if add_generation_prompt -%}{{- '<|im_start|>assistant\\n' -}}{%- endif -%}
            """),
    ]

    /// The format for a file of `architecture` whose vocabulary has the tokens `has` finds.
    public static func chosen(architecture: String?, has: (String) -> Bool) -> BuiltinChatTemplate {
        all.first { entry in
            (entry.architectures.isEmpty || architecture.map(entry.architectures.contains) == true) && entry.tokens.allSatisfy(has)
        } ?? all[all.count - 1]
    }

    /// The format for the model in `gguf`, whose vocabulary is `vocabulary`.
    public static func chosen(for gguf: GGUFFile, vocabulary: Vocabulary) -> BuiltinChatTemplate {
        chosen(architecture: gguf.metadata["general.architecture"]?.stringValue) { vocabulary.id(of: Array($0.utf8)) != nil }
    }

    /// The format named `name`, if there is one.
    public static func named(_ name: String) -> BuiltinChatTemplate? {
        all.first { $0.name == name }
    }
}
