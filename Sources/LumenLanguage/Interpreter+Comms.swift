import Evaluation

extension Interpreter {
    /// Hands a front end's comm message to the session's endpoint of that comm (a widget), in a
    /// running cell of its own, as ipykernel runs a widget's callbacks; a message for a comm
    /// the session does not have is refused as ipykernel refuses it.
    public func receive(_ message: CommMessage, output: any OutputSink) async {
        guard let endpoint = state.comms.endpoint(message.commID) else {
            CommMessage.refuse(message, output: output)
            return
        }
        if case .close = message.kind { state.comms.remove(message.commID) }
        let source = SourceText(label: "comm \(message.commID)", text: "")
        let context = builtinContext(at: SourceLocation(line: 1, column: 1), context: RunContext(output: output, depth: 0, source: source))
        await RunningCell.$current.withValue(RunningCell(origin: CellOrigin(executionCount: 0, cellID: nil))) {
            await endpoint.receive(message, context: context)
        }
    }

    public func openComms(target: String?) async -> [String: String] {
        state.comms.targets(of: target)
    }
}
