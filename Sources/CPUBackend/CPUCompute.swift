import Foundation

/// The forward pass's compute on this CPU (`ComputeBackend`): products split across a pool of
/// threads (`MatrixMultiplier`), the elementwise steps of `Operations`, attention through the
/// cache type's kernels (`AttentionKernels`), and the recurrent scans. It owns one session's
/// working memory for products and attention scores, sized for that session's widest row and
/// batch.
///
/// Not `Sendable`: the session that made it uses it, one forward pass at a time.
package final class CPUCompute: ComputeBackend {
    /// Splits products and other work across threads.
    private let pool: MatrixMultiplier
    /// Working memory for products.
    private var scratch: MatrixMultiplier.Scratch
    /// Attention scores: `scoresPerThread` floats per thread, one context-sized row for each
    /// query `attendFour` takes at once.
    private let scores: UnsafeMutablePointer<Float>
    private let scoresPerThread: Int
    private let buffers: [HostBuffer]
    /// Bytes of working memory it allocated.
    package let byteCount: Int
    /// Whether this backend started its pool's threads (and stops them when it goes).
    private let ownsPool: Bool

    /// A backend for batches of up to `batchCapacity` rows no wider than `widest` floats and
    /// caches of `contextLength` positions, its products in `activations` on `threads` threads —
    /// or on the threads of `sharing`, a backend whose passes never run at the same time as this
    /// one's (a draft model's beside its target's), so that two pools do not compete.
    package init(threads: Int, widest: Int, batchCapacity: Int, contextLength: Int, activations: ActivationPrecision,
                 sharing: CPUCompute? = nil) {
        pool = sharing?.pool ?? MatrixMultiplier(threads: threads)
        ownsPool = sharing == nil
        let threads = pool.threads
        var buffers: [HostBuffer] = []
        func buffer<Element: BitwiseCopyable>(_ count: Int, of type: Element.Type) -> UnsafeMutablePointer<Element> {
            let buffer = HostBuffer(byteCount: count * MemoryLayout<Element>.stride, zeroed: true)
            buffers.append(buffer)
            return buffer.contents.bindMemory(to: Element.self, capacity: max(1, count))
        }
        // 8-bit activations for a whole batch, in chunks of eight tokens (the last padded): prompt
        // batches meet quantized weights in integer products. The block sums are followed by the
        // half-block sums (three per block, see `lumen_quantize_q8_tokens`). Each thread's row
        // buffer also serves as the workspace of `lumen_matmul_levels_q8`.
        let rowBuffer = max(MatrixMultiplier.dequantizedRows * widest, MatrixMultiplier.levelsWorkspaceBytes(columns: widest) / 4 + 1)
        let chunk = MatrixMultiplier.tokenChunk, quantizedTokens = (batchCapacity + chunk - 1) / chunk * chunk
        // Eight rows restored from the eight-row layout (Q4_0, Q4_1 and Q4_K: at most 0.625 bytes a weight), with room to spare.
        let restoredBytes = 8 * widest * 4
        scratch = MatrixMultiplier.Scratch(
            rows: buffer(threads * rowBuffer, of: Float.self), rowBuffer: rowBuffer,
            restored: UnsafeMutableRawPointer(buffer(threads * restoredBytes, of: UInt8.self)), restoredBytes: restoredBytes,
            quantizedValues: buffer(quantizedTokens * widest, of: Int8.self),
            quantizedScales: buffer(quantizedTokens * (widest / 32 + 1), of: Float.self),
            quantizedSums: buffer(3 * quantizedTokens * (widest / 32 + 1), of: Float.self),
            activations: activations
        )
        scoresPerThread = AttentionKernels.queriesAtOnce * contextLength
        scores = buffer(threads * scoresPerThread, of: Float.self)
        self.buffers = buffers
        byteCount = buffers.reduce(0) { $0 + $1.byteCount }
    }

    deinit {
        if ownsPool { pool.shutdown() }
    }

    package var threads: Int { pool.threads }

    package func sharingThreads(widest: Int, batchCapacity: Int, contextLength: Int, activations: ActivationPrecision) -> any ComputeBackend {
        CPUCompute(threads: threads, widest: widest, batchCapacity: batchCapacity, contextLength: contextLength, activations: activations, sharing: self)
    }

    package func makeBuffer(bytes: Int, zeroed: Bool) -> any DeviceBuffer {
        HostBuffer(byteCount: bytes, zeroed: zeroed)
    }

    package var tokenByToken: Bool {
        get { scratch.tokenByToken }
        set { scratch.tokenByToken = newValue }
    }

    package func multiply(_ matrix: Matrix, _ input: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int) {
        pool.multiply(matrix, input, into: output, count: count, scratch: scratch)
    }

    package func multiplyEachToken(_ matrix: Matrix, _ input: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>, count: Int,
                                   scale: Float?, adding terms: [LowRankTerm]) {
        // What the threads read, as plain values: no reference counting row by row.
        let products = terms.map { term in
            guard let addScaledDots = term.b.kernels.addScaledDots else { preconditionFailure("a term whose B's format cannot add scaled dots") }
            return ScaledDots(rows: term.b.base, rowBytes: term.b.rowBytes, addScaledDots: addScaledDots, rank: term.b.columns, factor: term.factor,
                              lowRanks: term.lowRanks)
        }
        let outputRows = matrix.rows
        let finish: ((Range<Int>) -> Void)? = products.isEmpty && scale == nil ? nil : { range in
            products.withUnsafeBufferPointer { products in
                for token in 0..<count {
                    let row = output + token * outputRows
                    if let scale { for r in range { row[r] *= scale } }
                    for product in products {
                        product.addScaledDots(product.rows + range.lowerBound * product.rowBytes, product.rowBytes, range.count,
                                              product.lowRanks + token * product.rank, product.rank, product.factor, row + range.lowerBound)
                    }
                }
            }
        }
        pool.multiplyEachToken(matrix, input, into: output, count: count, scratch: scratch, finish: finish)
    }

    /// A term's `B (A x)` as `multiplyEachToken` adds it: B's rows, the kernel adding their
    /// scaled dot products, and `A x` of each token.
    private struct ScaledDots {
        let rows: UnsafeRawPointer
        let rowBytes: Int
        let addScaledDots: FormatKernels.AddScaledDots
        let rank: Int
        let factor: Float
        let lowRanks: UnsafeMutablePointer<Float>
    }

    package func addsLowRankTerms(of matrix: Matrix) -> Bool { matrix.kernels.addScaledDots != nil }

    package func rmsNorm(_ x: UnsafeMutablePointer<Float>, weights: [Float], epsilon: Float, into output: UnsafeMutablePointer<Float>,
                         count: Int, width: Int) {
        Operations.rmsNorm(x, weights: weights, epsilon: epsilon, into: output, count: count, width: width)
    }

    package func scale(_ x: UnsafeMutablePointer<Float>, by factor: Float, count: Int) {
        Operations.scale(x, by: factor, count: count)
    }

    package func add(_ delta: UnsafeMutablePointer<Float>, to x: UnsafeMutablePointer<Float>, count: Int) {
        Operations.add(delta, to: x, count: count)
    }

    package func addBias(_ bias: [Float], to x: UnsafeMutablePointer<Float>, count: Int) {
        Operations.addBias(bias, to: x, count: count)
    }

    package func softcap(_ x: UnsafeMutablePointer<Float>, cap: Float, count: Int) {
        Operations.softcap(x, cap: cap, count: count)
    }

    package func activate(_ activation: GatedActivation, gate: UnsafeMutablePointer<Float>, up: UnsafeMutablePointer<Float>, count: Int) {
        switch activation {
        case .swiGLU: Operations.swiGLU(gate, up, count: count, pool: pool)
        case .clampedSwiGLU: Operations.clampedSwiGLU(gate, up, count: count, pool: pool)
        case .geGLU: Operations.geGLU(gate, up, count: count, pool: pool)
        }
    }

    package func embed(_ tokens: [Int32], from embedding: Matrix, into x: UnsafeMutablePointer<Float>, width: Int) {
        Operations.embed(tokens, from: embedding, into: x, width: width)
    }

    package func rotate(_ rows: UnsafeMutablePointer<Float>, count: Int, width: Int, heads: Int, rotation: RoPERotation,
                        cosines: UnsafeMutablePointer<Float>, sines: UnsafeMutablePointer<Float>) {
        let pairs = rotation.pairs
        for row in 0..<count {
            let rowCosines = cosines + row * pairs, rowSines = sines + row * pairs
            for head in 0..<heads {
                let pointer = rows + row * width + head * rotation.headWidth
                for pair in 0..<pairs {
                    let (i, j) = rotation.adjacent ? (2 * pair, 2 * pair + 1) : (pair, pair + pairs)
                    let first = pointer[i], second = pointer[j]
                    let cosine = rowCosines[pair], sine = rowSines[pair]
                    pointer[i] = first * cosine - second * sine
                    pointer[j] = first * sine + second * cosine
                }
            }
        }
    }

    package func store(keys: UnsafeMutablePointer<Float>, values: UnsafeMutablePointer<Float>, count: Int, places: RowPlaces, heads: Int,
                       headWidth: Int, in cache: KVCacheLayer) {
        let geometry = cache.geometry, kernels = geometry.type.kernels, width = heads * headWidth
        for index in 0..<count {
            for head in 0..<heads {
                let offset = geometry.offset(sequence: places.sequences[index], kvHead: head, position: places.positions[index])
                let source = index * width + head * headWidth
                kernels.store(keys + source, cache.keys + offset, headWidth)
                kernels.store(values + source, cache.values + offset, headWidth)
            }
        }
    }

    /// Grouped-query attention, each query head over its sequence's cache or its last `window`
    /// positions. A prompt's tokens go four at a time (`attendFour`: each cached key and value
    /// read once for the four), unless a window cuts off positions within them or the batch is
    /// computed token by token (`tokenByToken`, and always when its rows are of several
    /// sequences). Items are (group of four tokens, head); each thread takes its own share's
    /// items in order, and the later groups, which attend to more positions, are shared out at
    /// the end.
    package func attend(_ queries: UnsafeMutablePointer<Float>, count: Int, places: RowPlaces, shape: AttentionShape, cache: KVCacheLayer,
                        into output: UnsafeMutablePointer<Float>) {
        let headWidth = shape.headWidth, heads = shape.heads, queryWidth = shape.queryWidth, group = heads / shape.kvHeads
        let geometry = cache.geometry, attend = geometry.type.kernels, stride = geometry.slotUnits
        let rowSequences = places.sequences, rowPositions = places.positions
        let work = count * heads * ((rowPositions.max() ?? 0) + 1) * headWidth
        let fourAtOnce = places.oneRun && !scratch.tokenByToken
        let together = AttentionKernels.queriesAtOnce, groups = (count + together - 1) / together
        let scores = scores, scoresPerThread = scoresPerThread, window = shape.window, sinks = shape.sinks, scale = shape.scale
        pool.parallelChunks(groups * heads, chunk: max(1, heads / 2), work: work * 8) { part, range in
            let scores = scores + part * scoresPerThread
            for item in range {
                let firstToken = item / heads * together, head = item % heads
                let tokens = min(together, count - firstToken)
                let query = queries + firstToken * queryWidth + head * headWidth
                let result = output + firstToken * queryWidth + head * headWidth
                let length = rowPositions[firstToken] + 1
                let sink = sinks?[head] ?? -.infinity
                // A sliding window keeps the positions p with (token position − p) < window.
                if tokens == together && headWidth % 8 == 0 && window.map({ length + together - 1 <= $0 }) ?? true && fourAtOnce {
                    let offset = geometry.offset(sequence: rowSequences[firstToken], kvHead: head / group, position: 0)
                    attend.attendFour(cache.keys + offset, cache.values + offset, stride, query, queryWidth, headWidth,
                                      length, scale, sink, scores, geometry.contextLength, result, queryWidth)
                    continue
                }
                for token in 0..<tokens {
                    let offset = geometry.offset(sequence: rowSequences[firstToken + token], kvHead: head / group, position: 0)
                    let length = rowPositions[firstToken + token] + 1
                    let first = window.map { max(0, length - $0) } ?? 0
                    _ = attend.attend(cache.keys + offset, cache.values + offset, stride, query + token * queryWidth, headWidth,
                                      first, length, scale, sink, scores, result + token * queryWidth)
                }
            }
        }
    }

    /// Recomputed with the cache's own attention kernel, one query at a time.
    package func attentionProbabilities(_ queries: UnsafeMutablePointer<Float>, count: Int, places: RowPlaces, shape: AttentionShape,
                                        cache: KVCacheLayer) -> [Float] {
        let geometry = cache.geometry, contextLength = geometry.contextLength
        let width = shape.heads * contextLength, group = shape.heads / shape.kvHeads
        var rows = [Float](repeating: 0, count: count * width)
        var scores = [Float](repeating: 0, count: contextLength), output = [Float](repeating: 0, count: shape.headWidth)
        for token in 0..<count {
            let length = places.positions[token] + 1
            let first = shape.window.map { max(0, length - $0) } ?? 0
            for head in 0..<shape.heads {
                let offset = geometry.offset(sequence: places.sequences[token], kvHead: head / group, position: 0)
                // The kernel leaves each position's exp(score − max) in `scores` and returns 1 / their
                // total (a sink's share included: with one, a row sums to less than 1, as llama.cpp's).
                let inverse = geometry.type.kernels.attend(cache.keys + offset, cache.values + offset, geometry.slotUnits,
                                                           queries + token * shape.queryWidth + head * shape.headWidth, shape.headWidth, first, length,
                                                           shape.scale, shape.sinks?[head] ?? -.infinity, &scores, &output)
                for key in first..<length { rows[token * width + head * contextLength + key] = scores[key] * inverse }
            }
        }
        return rows
    }

    /// Channel by channel through the rows in order: each input is read before its output is
    /// written, and then becomes the newest kept input.
    package func convolve(_ rows: UnsafeMutablePointer<Float>, stride: Int, channels: Int, count: Int, places: RowPlaces,
                          convolution: CausalConvolutionWeights, states: RecurrentStates) {
        let rowSequences = places.sequences, rowPositions = places.positions, width = convolution.width, kept = width - 1, silu = convolution.silu
        convolution.weights.withUnsafeBufferPointer { weights in
            pool.parallelChunks(channels, chunk: 64, work: count * channels * width) { _, range in
                for row in 0..<count {
                    let state = states.of(rowSequences[row])
                    for channel in range {
                        let history = state + channel * kept, tap = weights.baseAddress! + channel * width
                        if rowPositions[row] == 0 { history.update(repeating: 0, count: kept) }
                        let value = rows[row * stride + channel]
                        var sum: Float = 0
                        for index in 0..<kept { sum += history[index] * tap[index] }
                        sum += value * tap[kept]
                        for index in 0..<max(0, kept - 1) { history[index] = history[index + 1] }
                        if kept > 0 { history[kept - 1] = value }
                        rows[row * stride + channel] = silu ? sum / (1 + exp(-sum)) : sum
                    }
                }
            }
        }
    }

    /// Queries and keys L2-normalized per head (x / √(Σx² + ε)); then the delta rule, value head
    /// by value head through the rows in order, each head's state stored as llama.cpp's: row j
    /// holds S[·][j], so each product reads a row. Row j of the state: decay it by
    /// exp(softplus(decay + bias) · rate), read Sᵀk there, write the delta (v − Sᵀk)·β along k
    /// (β the strength's sigmoid), then read Sᵀq / √(value head width) — each row once, while it
    /// is in cache.
    package func deltaRule(_ mixed: UnsafeMutablePointer<Float>, gates: DeltaRuleGates, count: Int, places: RowPlaces, shape: DeltaRuleShape,
                           states: RecurrentStates, into output: UnsafeMutablePointer<Float>) {
        let keyWidth = shape.keyHeadWidth, valueWidth = shape.valueHeadWidth, valueHeads = shape.valueHeads, keyHeads = shape.keyHeads
        let keyDimension = keyHeads * keyWidth, valueDimension = valueHeads * valueWidth, stride = shape.stride
        for index in 0..<(count * valueHeads) {
            let head = index % valueHeads
            gates.strengths[index] = 1 / (1 + exp(-gates.strengths[index]))
            gates.decays[index] = Self.softplus(gates.decays[index] + gates.decayBias[head]) * gates.decayRate[head]
        }
        for row in 0..<count {
            for head in 0..<(2 * keyHeads) {
                let vector = mixed + row * stride + head * keyWidth
                var squares: Float = 0
                for index in 0..<keyWidth { squares += vector[index] * vector[index] }
                let scale = 1 / (squares + shape.epsilon).squareRoot()
                for index in 0..<keyWidth { vector[index] *= scale }
            }
        }
        let rowSequences = places.sequences, rowPositions = places.positions, scale = 1 / Float(valueWidth).squareRoot()
        let decays = gates.decays, strengths = gates.strengths
        pool.parallelChunks(valueHeads, chunk: 1, work: count * valueHeads * keyWidth * valueWidth * 4) { _, range in
            for head in range {
                let keyHead = head % keyHeads
                for row in 0..<count {
                    let matrix = states.of(rowSequences[row]) + shape.stateOffset + head * keyWidth * valueWidth
                    if rowPositions[row] == 0 { matrix.update(repeating: 0, count: keyWidth * valueWidth) }
                    let base = mixed + row * stride
                    let query = base + keyHead * keyWidth, key = base + keyDimension + keyHead * keyWidth
                    let value = base + 2 * keyDimension + head * valueWidth
                    let factor = exp(decays[row * valueHeads + head]), strength = strengths[row * valueHeads + head]
                    let result = output + row * valueDimension + head * valueWidth
                    for j in 0..<valueWidth {
                        let column = matrix + j * keyWidth
                        for i in 0..<keyWidth { column[i] *= factor }
                        let change = (value[j] - Self.dot(column, key, keyWidth)) * strength
                        for i in 0..<keyWidth { column[i] += key[i] * change }
                        result[j] = Self.dot(column, query, keyWidth) * scale
                    }
                }
            }
        }
    }

    /// The dot product of `count` floats at `a` and `b`, eight lanes at a time.
    @inline(__always)
    private static func dot(_ a: UnsafeMutablePointer<Float>, _ b: UnsafeMutablePointer<Float>, _ count: Int) -> Float {
        var lanes = SIMD8<Float>(), index = 0
        while index + 8 <= count {
            lanes += UnsafeRawPointer(a + index).loadUnaligned(as: SIMD8<Float>.self) * UnsafeRawPointer(b + index).loadUnaligned(as: SIMD8<Float>.self)
            index += 8
        }
        var sum = lanes.sum()
        while index < count {
            sum += a[index] * b[index]
            index += 1
        }
        return sum
    }

    /// ggml's softplus: log(1 + eˣ), x itself above 20.
    private static func softplus(_ x: Float) -> Float { x > 20 ? x : log1p(exp(x)) }
}
