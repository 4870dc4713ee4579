import Synchronization

/// The bounded queue between the threads that finish runs and the log's writer: pushing never
/// waits; when `capacity` records are already waiting, the record is dropped and counted.
final class RecordQueue: Sendable {
    private struct Contents {
        var records: [RunRecord] = []
        var dropped = 0
    }

    private let contents = Mutex(Contents())
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Adds `record`; false (and counted) when the queue is full.
    func push(_ record: RunRecord) -> Bool {
        contents.withLock { contents in
            guard contents.records.count < capacity else {
                contents.dropped += 1
                return false
            }
            contents.records.append(record)
            return true
        }
    }

    /// Takes every waiting record, and how many were dropped since the last call.
    func takeAll() -> (records: [RunRecord], dropped: Int) {
        contents.withLock { contents in
            defer { contents = Contents() }
            return (contents.records, contents.dropped)
        }
    }
}
