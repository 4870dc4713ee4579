import CKernels
import Executors
import Synchronization

/// Multiplies weight matrices by batches of vectors, splitting the rows across threads.
///
/// Rows are split across threads in chunks taken from per-thread shares that a thread with none
/// left can take over (`StealingRanges`); each thread writes only the rows it took, so the inner
/// loops take no locks. Quantized weights meet 8-bit activations in integer kernels (the
/// input vectors are quantized once per product): one token in each format's dot product (eight
/// rows at a time for matrices in an eight-row layout, `InterleavedRows`), a
/// prompt batch in the integer matrix–matrix product every quantized format shares (rows decoded
/// as levels eight at a time, `lumen_matmul_levels_q8`). F32 activations and F16/BF16 weights
/// widen a few rows at a time to F32. Small products run on the calling thread: for weights that
/// fit in cache, synchronisation would cost more than it saves.
package struct MatrixMultiplier {
    /// Working memory for products, allocated once per session.
    package struct Scratch {
        /// `rowBuffer` floats per thread: room for `dequantizedRows` dequantized rows, or the
        /// workspace of `lumen_matmul_levels_q8`.
        package let rows: UnsafeMutablePointer<Float>
        /// Floats of `rows` per thread.
        package let rowBuffer: Int
        /// Per thread, `restoredBytes` bytes: room for eight rows of the widest matrix restored
        /// from the eight-row layout (`InterleavedRows.restore`) for a prompt batch.
        package let restored: UnsafeMutableRawPointer
        /// Bytes of `restored` per thread.
        package let restoredBytes: Int
        /// The input vectors quantized to 8 bits (Q8_0 blocks' values): one vector's
        /// (`lumen_quantize_q8`), or a batch's in chunks of eight tokens (`lumen_quantize_q8_tokens`).
        package let quantizedValues: UnsafeMutablePointer<Int8>
        /// The scale of each block of 32 quantized values.
        package let quantizedScales: UnsafeMutablePointer<Float>
        /// Each block's scale times the sum of its values, then the same for each half block.
        package let quantizedSums: UnsafeMutablePointer<Float>
        /// Whether quantized weights meet quantized activations.
        package let activations: ActivationPrecision
        /// Whether a batch is multiplied as its tokens one by one would be (each product the same
        /// kernel, bit for bit), sharing each chunk of weight rows while it is in cache: so the
        /// tokens speculative decoding verifies get exactly the logits decoding them one at a
        /// time gives.
        package var tokenByToken = false

        /// Working memory a session allocated for its products (see each property).
        package init(rows: UnsafeMutablePointer<Float>, rowBuffer: Int, restored: UnsafeMutableRawPointer, restoredBytes: Int,
                     quantizedValues: UnsafeMutablePointer<Int8>, quantizedScales: UnsafeMutablePointer<Float>,
                     quantizedSums: UnsafeMutablePointer<Float>, activations: ActivationPrecision) {
            self.rows = rows
            self.rowBuffer = rowBuffer
            self.restored = restored
            self.restoredBytes = restoredBytes
            self.quantizedValues = quantizedValues
            self.quantizedScales = quantizedScales
            self.quantizedSums = quantizedSums
            self.activations = activations
        }
    }

    /// How many threads share a product.
    package let threads: Int
    private let workers: WorkerPool
    private let stealing: StealingRanges
    /// How many weight rows a thread widens to F32 at a time in batched products.
    package static let dequantizedRows = 12
    /// Rows a thread takes at a time in batched integer products (a multiple of the eight rows
    /// `lumen_matmul_levels_q8` decodes together).
    package static let rowChunk = 64
    /// Rows a thread takes at a time in batched F32 products: a multiple of the F32 kernel's
    /// three-row tile and of `dequantizedRows`.
    package static let floatRowChunk = 48
    /// Rows in each chunk of a matrix–vector product's shares.
    package static let vectorRowChunk = 16
    /// Products with fewer multiply-adds than this run on one thread.
    package static let parallelThreshold = 1 << 16
    /// Tokens whose 8-bit activations `lumen_quantize_q8_tokens` lays out together (the last chunk padded).
    package static let tokenChunk = Int(LUMEN_TOKEN_CHUNK)

    /// Bytes of workspace the integer matrix–matrix product needs for rows of `columns` weights.
    package static func levelsWorkspaceBytes(columns: Int) -> Int { lumen_matmul_levels_workspace(columns) }

    package init(threads: Int) {
        self.threads = max(1, threads)
        workers = WorkerPool(threads: self.threads)
        stealing = StealingRanges(parts: self.threads)
    }

    /// Stops the pool's threads.
    package func shutdown() {
        workers.shutdown()
    }

    /// Runs `body(part, range)` over `0..<count` in chunks of `chunk`: each thread takes the chunks
    /// of its own share in order, then helps with what is left of the others' (`StealingRanges`),
    /// so a thread slowed by the operating system, or given the costlier items, does not keep the
    /// others waiting at the end.
    package func parallelChunks(_ count: Int, chunk: Int, work: Int, _ body: (Int, Range<Int>) -> Void) {
        let chunks = (count + chunk - 1) / chunk
        let parts = work < Self.parallelThreshold ? 1 : min(threads, chunks)
        guard parts > 1 else {
            body(0, 0..<count)
            return
        }
        stealing.reset(chunks: chunks, parts: parts)
        workers.run(parts: parts) { part in
            stealing.run(part: part, parts: parts) { index in
                body(part, (index * chunk)..<min(count, (index + 1) * chunk))
            }
        }
    }

    /// Quantizes `count` input vectors of `columns` into `scratch` for `lumen_matmul_levels_q8`,
    /// the chunks of `LUMEN_TOKEN_CHUNK` tokens split across the threads (each chunk is `chunk`
    /// tokens' values, scales and sums: see `lumen_quantize_q8_tokens`).
    private func quantizeBatch(_ input: UnsafeMutablePointer<Float>, count: Int, columns: Int, scratch: Scratch) {
        let chunk = Int(LUMEN_TOKEN_CHUNK), blocks = columns / 32
        parallelChunks((count + chunk - 1) / chunk, chunk: 1, work: count * columns) { _, range in
            for index in range {
                let first = index * chunk
                lumen_quantize_q8_tokens(input + first * columns, min(chunk, count - first), columns, scratch.quantizedValues + first * columns,
                                         scratch.quantizedScales + first * blocks, scratch.quantizedSums + 3 * first * blocks)
            }
        }
    }

    /// `output[t][r] = matrix[r] · input[t]` for `count` input vectors.
    package func multiply(_ matrix: Matrix, _ input: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>,
                  count: Int, scratch: Scratch) {
        let rows = matrix.rows, columns = matrix.columns
        if count == 1 || scratch.tokenByToken {
            multiplyEachToken(matrix, input, into: output, count: count, scratch: scratch)
            return
        }
        if scratch.activations == .quantized, let levels = matrix.kernels.levels {
            quantizeBatch(input, count: count, columns: columns, scratch: scratch)
            parallelChunks(rows, chunk: Self.rowChunk, work: rows * columns * count) { part, range in
                let workspace = scratch.rows + part * scratch.rowBuffer
                guard let groups = matrix.interleavedGroups(from: range.lowerBound / 8) else {
                    lumen_matmul_levels_q8(levels, matrix.base + range.lowerBound * matrix.rowBytes, matrix.rowBytes, range.count,
                                           scratch.quantizedValues, scratch.quantizedScales, scratch.quantizedSums, count, columns,
                                           output + range.lowerBound, rows, workspace, 0)
                    return
                }
                // The file's pages of an interleaved matrix are not kept: each group of eight rows
                // goes back to the format's layout in this thread's scratch (`rowChunk` is a
                // multiple of eight, and so is `rows`).
                let restored = scratch.restored + part * scratch.restoredBytes
                for group in 0..<range.count / 8 {
                    groups.rows.restore(groups.start + group * groups.rows.groupBytes, into: restored)
                    lumen_matmul_levels_q8(levels, restored, matrix.rowBytes, 8, scratch.quantizedValues, scratch.quantizedScales,
                                           scratch.quantizedSums, count, columns, output + range.lowerBound + 8 * group, rows, workspace, 0)
                }
            }
            return
        }
        parallelChunks(rows, chunk: Self.floatRowChunk, work: rows * columns * count) { part, range in
            if matrix.type == .f32 {
                let weights = (matrix.base + range.lowerBound * matrix.rowBytes).assumingMemoryBound(to: Float.self)
                lumen_matmul_f32(weights, columns, range.count, input, count, columns, output + range.lowerBound, rows)
            } else {
                // Widen a few rows at a time into this thread's scratch, then multiply them as F32.
                let buffer = scratch.rows + part * scratch.rowBuffer
                for start in stride(from: range.lowerBound, to: range.upperBound, by: Self.dequantizedRows) {
                    let chunk = min(Self.dequantizedRows, range.upperBound - start)
                    for offset in 0..<chunk { matrix.dequantize(row: start + offset, into: buffer + offset * columns) }
                    lumen_matmul_f32(buffer, columns, chunk, input, count, columns, output + start, rows)
                }
            }
        }
    }

    /// `multiply` for `count` tokens each as one token is multiplied: its 8-bit activations
    /// (`lumen_quantize_q8`) in the format's dot product (eight rows at a time in the eight-row
    /// layout), or F32 activations in the row's dot product. Each thread takes a chunk of rows
    /// through every token in turn, so the rows are read from memory once, then calls `finish`
    /// with the rows it wrote (of every token) while they are still in its cache: what LoRA
    /// adapters add to them (`CPUCompute.multiplyEachToken`), with no pass over the rows and no
    /// dispatch to the threads of their own. `multiply` takes this path for one token, or for a
    /// session that multiplies token by token.
    package func multiplyEachToken(_ matrix: Matrix, _ input: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>,
                           count: Int, scratch: Scratch, finish: ((Range<Int>) -> Void)? = nil) {
        let rows = matrix.rows, columns = matrix.columns, blocks = columns / 32
        let groups = scratch.activations == .quantized ? matrix.interleavedGroups(from: 0) : nil
        let kernel = scratch.activations == .quantized ? matrix.kernels.quantizedDot : nil
        if groups != nil || kernel != nil {
            for token in 0..<count {
                lumen_quantize_q8(input + token * columns, columns, scratch.quantizedValues + token * columns,
                                  scratch.quantizedScales + token * blocks, scratch.quantizedSums + 3 * token * blocks)
            }
        }
        if let groups, let tokens = groups.rows.layout.dotTokens, count > 1 {
            parallelChunks(rows / 8, chunk: Self.vectorRowChunk / 8, work: rows * columns * count) { _, range in
                tokens(groups.start + range.lowerBound * groups.rows.groupBytes, range.count, scratch.quantizedValues, scratch.quantizedScales,
                       scratch.quantizedSums, columns, count, output + 8 * range.lowerBound, rows, 0)
                finish?((8 * range.lowerBound)..<(8 * range.upperBound))
            }
        } else if let groups {
            parallelChunks(rows / 8, chunk: Self.vectorRowChunk / 8, work: rows * columns * count) { _, range in
                for token in 0..<count {
                    groups.rows.layout.dot(groups.start + range.lowerBound * groups.rows.groupBytes, range.count, scratch.quantizedValues + token * columns,
                                           scratch.quantizedScales + token * blocks, scratch.quantizedSums + 3 * token * blocks, columns,
                                           output + token * rows + 8 * range.lowerBound, 0)
                }
                finish?((8 * range.lowerBound)..<(8 * range.upperBound))
            }
        } else if let tokens = matrix.kernels.quantizedDotTokens, kernel != nil {
            parallelChunks(rows, chunk: Self.vectorRowChunk, work: rows * columns * count) { _, range in
                tokens(matrix.base + range.lowerBound * matrix.rowBytes, matrix.rowBytes, range.count, scratch.quantizedValues, scratch.quantizedScales,
                       scratch.quantizedSums, columns, count, output + range.lowerBound, rows, 0)
                finish?(range)
            }
        } else {
            parallelChunks(rows, chunk: Self.vectorRowChunk, work: rows * columns * count) { _, range in
                for token in 0..<count {
                    for row in range { output[token * rows + row] = matrix.dot(row: row, input + token * columns) }
                }
                finish?(range)
            }
        }
    }
}
