import Evaluation

/// `spawn`, `jobs` and the job methods.
enum JobLibrary {
    static let all: [Builtin] = [spawn, jobs, cancel]

    static let spawn = Builtin(
        name: "spawn",
        signature: "spawn(priority: \"utility\" | \"background\" = \"utility\") { … } -> Job",
        summary: "Starts the closure as a background job that outlives the cell: later cells run meanwhile, and interrupting them does not cancel it. job.status, job.progress, job.cancel(), job.result (waits)."
    ) { arguments, context in
        let (closure, location) = try arguments.requirePositional("work")
        let priorityName = try arguments.labelledString("priority") ?? "utility"
        try arguments.finish()
        guard case .function(let function) = closure, function.closure.parameters.isEmpty else {
            throw LumenError(.type, "spawn() needs a closure without parameters, like spawn { batch(m, prompts) }", at: location)
        }
        let priority: TaskPriority
        switch priorityName {
        case "utility": priority = .utility
        case "background": priority = .background
        default: throw LumenError(.value, "priority must be \"utility\" or \"background\", not \"\(priorityName)\"", at: location)
        }
        let firstLine = function.closure.body.isEmpty ? "{ }" : "spawn { … } from \(function.source.label)"
        let job = context.session.jobs.add(firstLine)
        let call = context.call
        job.start(priority: priority) { try await call(closure, []) }
        return .host(job)
    }

    static let jobs = Builtin(name: "jobs", signature: "jobs() -> Table", summary: "The session's background jobs as a table.") { arguments, context in
        try arguments.finish()
        return .rendered(Rendered(kind: "Jobs", bundle: context.session.jobs.table.mimeBundle))
    }

    static let cancel = Builtin(name: "cancel", signature: "cancel(_ job)", summary: "Cancels a background job; its finished work stays.") { arguments, _ in
        let (value, location) = try arguments.requirePositional("job")
        try arguments.finish()
        guard case .host(let object) = value, let job = object as? Job else {
            throw LumenError(.type, "cancel() needs a job, got \(value.typeName)", at: location)
        }
        job.cancel()
        return .null
    }
}
