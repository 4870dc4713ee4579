import GRDB

// A run's kind is stored in the log as its raw value.
extension RunKind: DatabaseValueConvertible {}
