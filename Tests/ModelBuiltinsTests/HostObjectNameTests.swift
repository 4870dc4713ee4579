import Evaluation
import GenerationTypes
import Inference
import Testing
@testable import LumenLanguage
@testable import ModelBuiltins
import RunLog
import Tensors

/// What each host object says it has — properties and methods, which completion lists and the
/// unknown-member error names — against what it answers.
@Suite("Host objects' declared names")
struct HostObjectNameTests {
    @Test("every host object answers each property it lists (and no other), and each of its methods is the session's built-in of that name")
    func declaredNamesAreAnswered() async throws {
        let models = try sharedModelsDirectory()
        let model = try LoadedModel(path: models + "/stories260K.gguf", contextLength: 64, threads: 1, instances: 1, parallel: 4)
        let generation = Generation(prompt: "Once", text: " upon", tokens: [GeneratedToken(id: 403, text: " upon", logProbability: -0.5)],
                                    stats: GenerationSummary(promptTokens: 2, generatedTokens: 1, timeToFirstToken: 0.01, promptTokensPerSecond: 100,
                                                             generationTokensPerSecond: 50, finishReason: .length),
                                    options: GenerationOptions(), interrupted: false)
        let chat = try await model.conversation(system: "Tell a story.", template: "{% for m in messages %}{{ m.content }}{% endfor %}") { _ in }
        let job = Job(number: 1, title: "1")
        job.start(priority: .utility) { .integer(1) }
        let measurement = Measurement(typeName: "Perplexity", number: 2, properties: ["value": .double(2)], bundle: .plainText("2"))
        let vector = ControlVectorObject(vector: ControlVector(width: 2, directions: [1: [3, 4]]), source: RunSteering.Vector(path: "/v.gguf", scale: 1))
        let tensor = TensorObject(Tensor([1, 2, 3, 4], shape: [2, 2], axes: ["position", "width"]))
        let configuration = try model.model().configuration
        let plan = ActivationTrace(points: ActivationPoint.allCases, blocks: [0], configuration: configuration)
        let trace = TraceObject(trace: plan, ids: [1], pieces: [""], tensors: Dictionary(uniqueKeysWithValues: ActivationPoint.allCases.map { ($0, Tensor([0], shape: [1])) }),
                                logits: [0, 1], tokenLabels: ["a", "b"], generated: nil, interventions: [])
        let intervention = InterventionObject(RunIntervention(ablating: "attn_out", block: 0))
        let session = try await model.lease()
        _ = try await session.session.prefill([1, 403])
        let state = StateObject(model: model, weights: try model.model(), prefix: await session.session.cachedPrefix())
        session.release()
        let objects: [any HostObject] = [model, generation, chat, RunList([]), Secret(variable: "A_KEY", value: "x"), job, measurement, vector,
                                         tensor, trace, intervention, state, TokensObject(ids: [1, 403], tokenizer: try model.model().tokenizer)]
        // The session's built-ins by name: a method called as `x.f(…)` is the function `f(x, …)`.
        let builtins = Dictionary((StandardLibrary.all + ModelHost.libraries(runLog: nil, frontEnd: "kernel").flatMap(\.builtins)).map { ($0.name, $0.signature) },
                                  uniquingKeysWith: { first, _ in first })
        for object in objects {
            let members = object.members
            for name in members.properties {
                let answered = try members.property(name) != nil
                let awaited = answered ? true : try await object.awaitedProperty(name, at: SourceLocation(line: 1, column: 1)) != nil
                #expect(awaited, "\(object.typeName).\(name) is listed but not answered")
            }
            #expect(try members.property("noSuchProperty") == nil)
            #expect(Set(members.names).count == members.names.count, "\(object.typeName) has a property and a method of one name")
            for method in members.methods {
                #expect(builtins[method.name] == method.signature, "\(object.typeName).\(method.name) is not the session's built-in \(method.name)")
            }
        }
    }
}
