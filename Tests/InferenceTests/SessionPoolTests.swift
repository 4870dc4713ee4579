import Dispatch
import Foundation
import GGUF
import GenerationTypes
@testable import Inference
import Synchronization
import Testing

/// Lets `freePasses` forward passes through, then holds the next at block 0 until opened, so a
/// test can look at the pool while a generation is known to be running.
private final class Gate: ForwardHook {
    private let semaphore = DispatchSemaphore(value: 0)
    private let freePasses: Mutex<Int>
    init(freePasses: Int = 0) { self.freePasses = Mutex(freePasses) }
    func visits(_ point: ActivationPoint, layer: Int) -> Bool { point == .blockOutput && layer == 0 }
    func visit(_ point: ActivationPoint, layer: Int, positions: Range<Int>, rows: UnsafeMutableBufferPointer<Float>, width: Int) {
        let free = freePasses.withLock { count in
            defer { count -= 1 }
            return count > 0
        }
        guard !free else { return }
        // Passes once opened, and lets every later pass through.
        semaphore.wait()
        semaphore.signal()
    }
    func check(_ model: LanguageModel) throws(ModelError) {}
    func open() { semaphore.signal() }
}

@Suite("Session pools")
struct SessionPoolTests {
    @Test("a generation holds its session until it ends and gives it back before its stream ends; the next request gets the least busy session")
    func generationHoldsItsSession() async throws {
        let pool = try SessionPool(loading: try TestData.path("models/stories260K.gguf"), instances: 2, contextLength: 64, threads: 1)
        let gate = Gate()
        let options = GenerationOptions(sampling: SamplingOptions(temperature: 0), maxTokens: 3)
        let first = try await pool.lease()
        #expect(first.index == 0)
        let events = first.generate("Once", options: options, pipeline: try GenerationPipeline(options: options, model: pool.model, hooks: [gate]))
        // The generation waits at its first pass: session 0 is busy, so the next request gets 1.
        let second = try await pool.lease()
        #expect(second.index == 1)
        #expect(pool.leases == (held: 2, waiting: 0))
        second.release()
        #expect(pool.leases == (held: 1, waiting: 0))
        gate.open()
        var finished = false
        for try await event in events {
            if case .finished = event { finished = true }
        }
        #expect(finished)
        #expect(pool.leases == (held: 0, waiting: 0))
        // Given back before the stream ended: both are free, and the first is the least busy.
        let third = try await pool.lease()
        #expect(third.index == 0)
        // A request that prefers a session with room gets it.
        let preferring = try await pool.lease(preferring: 0)
        #expect(preferring.index == 0)
    }

    @Test("a running generation's prompt and tokens are the pool's cache in use, and nothing is once it ends")
    func cacheInUse() async throws {
        let pool = try SessionPool(loading: try TestData.path("models/stories260K.gguf"), instances: 2, contextLength: 64, threads: 1)
        let gate = Gate(freePasses: 1)
        let options = GenerationOptions(sampling: SamplingOptions(temperature: 0), maxTokens: 3)
        let prompt = pool.model.tokenizer.encode("Once upon a time")
        let lease = try await pool.lease()
        var events = lease.generate(tokens: prompt, options: options, pipeline: try GenerationPipeline(options: options, model: pool.model, hooks: [gate]))
            .makeAsyncIterator()
        // The first token is drawn from the prompt's pass; the next pass waits at the gate.
        guard case .token = try await events.next() else {
            Issue.record("no first token")
            return
        }
        #expect(pool.cacheUsage == Double(prompt.count) / 128, "the prompt's \(prompt.count) tokens of 2 sessions × 64")
        #expect(pool.leases == (held: 1, waiting: 0))
        gate.open()
        while try await events.next() != nil {}
        #expect(pool.cacheUsage == 0)
        #expect(pool.leases == (held: 0, waiting: 0))
    }

    @Test("every pool of one file shares its weights, however its path is spelt")
    func poolsShareWeights() throws {
        // A file of its own: tests running alongside reload, and so evict, the shared models.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("lumen-pools-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("model.gguf")
        try FileManager.default.copyItem(atPath: try TestData.path("models/stories260K.gguf"), toPath: file.path)
        let link = directory.appendingPathComponent("link.gguf")
        try FileManager.default.createSymbolicLink(at: link, withDestinationURL: file)
        let one = try SessionPool(loading: file.path, contextLength: 16, threads: 1)
        let other = try SessionPool(loading: directory.path + "/./model.gguf", contextLength: 16, threads: 1)
        let linked = try SessionPool(loading: link.path, contextLength: 16, threads: 1)
        #expect(one.model === other.model)
        #expect(one.model === linked.model)
        let elsewhere = try SessionPool(loading: try TestData.path("models/stories260K.gguf"), contextLength: 16, threads: 1)
        #expect(one.model !== elsewhere.model)
    }
}
