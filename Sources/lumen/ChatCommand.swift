import ArgumentParser
import ChatTemplates
import Executors
import Foundation
import GenerationTypes
import Inference
import LumenKit
import ModelBuiltins
import RunLog
import Terminal

/// `lumen chat MODEL`: a conversation in the terminal, replies streaming as they are generated.
struct ChatCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "chat",
        abstract: "Chat with a model in the terminal, with its chat template; replies stream as they are generated.",
        discussion: """
            On a terminal: type a message and press Enter (end a line with \\ to continue it on the \
            next); Ctrl-C stops a reply (keeping what was said), Ctrl-D quits. From a pipe: each \
            paragraph (lines up to a blank line) is one message, and only the replies are printed.
            """
    )

    @ArgumentParser.Argument(help: "A GGUF model: a path, or a name found as load() finds it (LUMEN_MODEL_PATH, the model cache).")
    var model: String

    @Option(help: "A system message to start the conversation with.")
    var system: String?

    @Option(help: "A Jinja chat template file to use instead of the model's.")
    var template: String?

    @Option(name: [.customLong("reasoning"), .customLong("rea", withSingleDash: true)],
            help: ArgumentHelp("Thinking before replies, where the template can switch it (enable_thinking): on, off, or auto (the template's default).",
                               valueName: "on|off|auto"))
    var reasoning = "auto"

    @OptionGroup var sampling: SamplingArguments

    @OptionGroup(title: "Constrained output") var constraints: ConstraintArguments

    @OptionGroup(title: "Control vectors") var controlVectors: ControlVectorArguments

    @OptionGroup(title: "LoRA adapters") var lora: LoRAArguments

    @OptionGroup(title: "KV cache") var cache: CacheTypeArguments

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let logger = global.bootstrapLogging(label: "lumen.chat")
        let log = await global.openRunLog(logger: logger)
        let constraint = try await constraints.readConstraint()
        let llama = try await WeightCache.shared.load(ModelLocator.resolve(model))
        var options = try sampling.options(vocabularySize: llama.tokenizer.vocabularySize)
        options.constraint = constraint
        let templateFile = template
        let templateSource = try await DedicatedThread.run(name: "lumen-template") { () throws(CommandError) in
            try templateFile.map { (path: String) throws(CommandError) in try TextFile.read(path) }
        }
        let container = ModelContainer(model: llama, settings: ModelContainer.Settings(contextLength: sampling.contextLength, threads: sampling.threads,
                                                                                       sequencesPerSession: 1, chatTemplate: templateSource,
                                                                                       hooks: try await controlVectors.readHooks(for: llama),
                                                                                       adapters: try await lora.adapters(for: llama),
                                                                                       cacheType: try cache.resolved(for: llama, name: model)),
                                       recorder: log.map { RunRecorder(log: $0, origin: RunOrigin(frontEnd: "cli")) })
        let chatTemplate = try container.chatTemplate()
        var conversation = Conversation(template: chatTemplate, system: system)
        if let note = chatTemplate.origin.fallbackNote(model: model, option: "--template") {
            FileHandle.standardError.write(Data((note + "\n").utf8))
        }
        switch reasoning {
        case "auto": break
        case "on", "off":
            guard chatTemplate.hasThinkingSwitch else {
                throw ValidationError("--reasoning \(reasoning): the chat template has no thinking switch (enable_thinking)")
            }
            conversation.thinking = reasoning == "on"
        default: throw ValidationError("--reasoning takes on, off or auto, got \(reasoning)")
        }
        let interactive = isatty(STDIN_FILENO) != 0
        let events = TerminalEvents()
        var lines: [String] = []
        func prompt(_ text: String) {
            if interactive { FileHandle.standardOutput.write(Data(text.utf8)) }
        }
        prompt("> ")
        for await event in events.events {
            var message: String?
            switch event {
            case .line(let line):
                if interactive {
                    if line.hasSuffix("\\") {
                        lines.append(String(line.dropLast()))
                        prompt("… ")
                        continue
                    }
                    lines.append(line)
                    message = lines.joined(separator: "\n")
                    lines = []
                } else if line.trimmingCharacters(in: .whitespaces).isEmpty {
                    message = lines.joined(separator: "\n")
                    lines = []
                } else {
                    lines.append(line)
                    continue
                }
            case .endOfInput:
                if !lines.isEmpty { try await reply(to: lines.joined(separator: "\n"), in: &conversation, container: container, options: options, events: events) }
                prompt("\n")
                await log?.flush()
                return
            case .interrupt:
                lines = []
                prompt("\n(Ctrl-D quits)\n> ")
                continue
            }
            if let message, !message.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                try await reply(to: message, in: &conversation, container: container, options: options, events: events)
            }
            prompt("> ")
        }
        await log?.flush()
    }

    /// Sends `message`, streams the reply to stdout and adds both to the conversation (and the
    /// turn to the run log); Ctrl-C stops the reply and keeps it, marked as partial.
    private func reply(to message: String, in conversation: inout Conversation, container: ModelContainer, options: GenerationOptions,
                       events: TerminalEvents) async throws {
        conversation.append(ChatMessage(role: "user", content: message))
        let prompt = try container.chatPrompt(conversation.messages, thinking: conversation.thinking)
        let stop = StopSignal()
        events.interruptRouting.set { stop.raise(); return true }
        defer { events.interruptRouting.set(nil) }
        // The reasoning, when the format marks one, is shown dimmed on a terminal, on lines of its own.
        var split = ReasoningStream(syntax: prompt.reasoning, prompt: prompt.text)
        var printer = ReasoningPrinter(dims: isatty(STDOUT_FILENO) != 0)
        let run = RunDescription(entry: "lumen chat", prompt: message, steering: controlVectors.logged)
        let collected = try await GenerationCollector.collect(container.chat(prompt, options: options, stop: stop, run: run)) { token in
            let (thought, said) = split.append(token.text)
            FileHandle.standardOutput.write(Data(printer.text(reasoning: thought, reply: said).utf8))
        }
        FileHandle.standardOutput.write(Data(printer.finish().utf8))
        let summary = collected.summary
        let reply = split.reply
        FileHandle.standardOutput.write(Data("\n".utf8))
        let interrupted = stop.isRaised
        conversation.append(ChatMessage(role: "assistant", content: reply.content, isPartial: interrupted, reasoning: reply.reasoning))
        if let summary {
            let reused = summary.reusedPromptTokens > 0 ? ", \(summary.reusedPromptTokens) reused" : ""
            let note = String(format: "[%d prompt tokens%@, %d generated at %.1f tok/s, finished: %@]\n", summary.promptTokens, reused,
                              summary.generatedTokens, summary.generationTokensPerSecond, interrupted ? "interrupted" : summary.finishReason.rawValue)
            FileHandle.standardError.write(Data(note.utf8))
        }
    }
}
