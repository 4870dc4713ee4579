import ArgumentParser
import ChatTemplates
import Foundation
import GenerationTypes
import Inference
import LumenModels
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

    @OptionGroup var global: GlobalOptions

    func run() async throws {
        let logger = global.bootstrapLogging(label: "lumen.chat")
        let log = await global.openRunLog(logger: logger)
        var options = sampling.options
        options.reusesCachedPrefix = true
        options.constraint = try constraints.constraint()
        let llama = try await WeightCache.shared.load(ModelLocator.resolve(model))
        let templateSource = try template.map { (path: String) throws(CommandError) in try TextFile.read(path) }
        var conversation = try Conversation(gguf: llama.gguf, vocabulary: llama.tokenizer.vocabulary, system: system, template: templateSource)
        if let note = conversation.template?.origin.fallbackNote(model: model, option: "--template") {
            FileHandle.standardError.write(Data((note + "\n").utf8))
        }
        switch reasoning {
        case "auto": break
        case "on", "off":
            guard conversation.template?.hasThinkingSwitch == true else {
                throw ValidationError("--reasoning \(reasoning): the chat template has no thinking switch (enable_thinking)")
            }
            conversation.thinking = reasoning == "on"
        default: throw ValidationError("--reasoning takes on, off or auto, got \(reasoning)")
        }
        if let syntax = conversation.template?.reasoning { options.shownTokens = syntax.shownTokenIDs(in: llama.tokenizer.vocabulary) }
        let lease = try await SessionPool(model: llama, contextLength: sampling.contextLength, threads: sampling.threads).lease()
        defer { lease.release() }
        let session = lease.session
        let hooks = try controlVectors.hooks(for: llama)
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
                if !lines.isEmpty { try await reply(to: lines.joined(separator: "\n"), in: &conversation, session: session, options: options, hooks: hooks, llama: llama, events: events, log: log) }
                prompt("\n")
                await log?.flush()
                return
            case .interrupt:
                lines = []
                prompt("\n(Ctrl-D quits)\n> ")
                continue
            }
            if let message, !message.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                try await reply(to: message, in: &conversation, session: session, options: options, hooks: hooks, llama: llama, events: events, log: log)
            }
            prompt("> ")
        }
        await log?.flush()
    }

    /// Sends `message`, streams the reply to stdout and adds both to the conversation (and the
    /// turn to the run log); Ctrl-C stops the reply and keeps it, marked as partial.
    private func reply(to message: String, in conversation: inout Conversation, session: ModelSession, options: GenerationOptions, hooks: [any ForwardHook],
                       llama: LanguageModel, events: TerminalEvents, log: RunLog?) async throws {
        conversation.append(ChatMessage(role: "user", content: message))
        let rendered = try conversation.renderedPrompt()
        let tokens = conversation.promptTokens(llama.tokenizer, text: rendered)
        let stop = StopSignal()
        events.interruptRouting.set { stop.raise(); return true }
        defer { events.interruptRouting.set(nil) }
        let pipeline = try GenerationPipeline(options: options, model: llama, hooks: hooks)
        // The reasoning, when the format marks one, is shown dimmed on a terminal, on lines of its own.
        var split = ReasoningStream(syntax: conversation.template?.reasoning, prompt: rendered)
        var printer = ReasoningPrinter(dims: isatty(STDOUT_FILENO) != 0)
        let collected = try await GenerationCollector.collect(session.generate(tokens: tokens, options: options, pipeline: pipeline, stop: stop)) { token in
            let (thought, said) = split.append(token.text)
            FileHandle.standardOutput.write(Data(printer.text(reasoning: thought, reply: said).utf8))
        }
        FileHandle.standardOutput.write(Data(printer.finish().utf8))
        let (generated, summary) = (collected.tokens, collected.summary)
        let reply = split.reply
        FileHandle.standardOutput.write(Data("\n".utf8))
        let interrupted = stop.isRaised
        if let summary {
            log?.record(RunRecord(generationAt: "lumen chat", origin: RunOrigin(frontEnd: "cli"), model: RunModel(llama),
                                  prompt: message, messages: conversation.messages, renderedPrompt: rendered, tokens: generated, summary: summary,
                                  options: options, interrupted: interrupted, steering: controlVectors.logged))
        }
        conversation.append(ChatMessage(role: "assistant", content: reply.content, isPartial: interrupted, reasoning: reply.reasoning))
        if let summary {
            let reused = summary.reusedPromptTokens > 0 ? ", \(summary.reusedPromptTokens) reused" : ""
            let note = String(format: "[%d prompt tokens%@, %d generated at %.1f tok/s, finished: %@]\n", summary.promptTokens, reused,
                              summary.generatedTokens, summary.generationTokensPerSecond, interrupted ? "interrupted" : summary.finishReason.rawValue)
            FileHandle.standardError.write(Data(note.utf8))
        }
    }
}
