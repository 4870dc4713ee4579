/// A scratch buffer of the forward pass that only some stages use (a mixture's router scores, a
/// recurrent layer's projections), named in the file of the stage that uses it: stages that name
/// the same buffer share it. A stage declares what it needs (`ScratchNeed`) and the state
/// allocates each buffer once, as large as the largest need of it (`InferenceState.scratch`), so
/// the state holds no architecture's buffers by name.
struct ScratchBuffer: Hashable, Sendable {
    let name: String

    init(_ name: String) {
        self.name = name
    }

    /// This buffer with `floatsPerRow` floats for each row of a batch, and `extraRows` rows more.
    func need(floatsPerRow: Int, extraRows: Int = 0) -> ScratchNeed {
        ScratchNeed(buffer: self, floatsPerRow: floatsPerRow, extraRows: extraRows)
    }
}

/// How large a stage needs one of its scratch buffers.
struct ScratchNeed: Sendable {
    let buffer: ScratchBuffer
    let floatsPerRow: Int
    let extraRows: Int

    /// Floats for a batch of `rows` rows.
    func floats(rows: Int) -> Int { floatsPerRow * (rows + extraRows) }
}
