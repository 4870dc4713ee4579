import CKernels
import Synchronization

/// Multiplies weight matrices by batches of vectors, splitting the rows across threads.
///
/// Rows are split across threads, either one contiguous range per thread or in chunks that the
/// threads claim in turn from an atomic counter; each thread writes only its own rows, so the
/// inner loops take no locks. Quantized weights meet 8-bit activations in integer kernels (the
/// input vectors are quantized once per product): one token in each format's dot product, a
/// prompt batch in the integer matrix–matrix product every quantized format shares (rows decoded
/// as levels eight at a time, `lumen_matmul_levels_q8`). F32 activations and F16/BF16 weights
/// widen a few rows at a time to F32. Small products run on the calling thread: for weights that
/// fit in cache, synchronisation would cost more than it saves.
struct MatrixPool {
    /// Working memory for products, allocated once per session.
    struct Scratch {
        /// `rowBuffer` floats per thread: room for `dequantizedRows` dequantized rows, or the
        /// workspace of `lumen_matmul_levels_q8`.
        let rows: UnsafeMutablePointer<Float>
        /// Floats of `rows` per thread.
        let rowBuffer: Int
        /// The input vectors quantized to 8 bits (Q8_0 blocks' values), one after another.
        let quantizedValues: UnsafeMutablePointer<Int8>
        /// The scale of each block of 32 quantized values, token after token.
        let quantizedScales: UnsafeMutablePointer<Float>
        /// Each block's scale times the sum of its values, then the same for each half block
        /// (see `lumen_quantize_q8`), token after token.
        let quantizedSums: UnsafeMutablePointer<Float>
        /// Whether quantized weights meet quantized activations.
        let activations: ActivationPrecision
    }

    /// How many threads share a product.
    let threads: Int
    private let workers: WorkerPool
    /// How many weight rows a thread widens to F32 at a time in batched products.
    static let dequantizedRows = 12
    /// Rows a thread claims at a time in batched integer products (a multiple of the eight rows
    /// `lumen_matmul_levels_q8` decodes together).
    static let rowChunk = 64
    /// Products with fewer multiply-adds than this run on one thread.
    static let parallelThreshold = 1 << 16

    init(threads: Int) {
        self.threads = max(1, threads)
        workers = WorkerPool(threads: self.threads)
    }

    /// Stops the pool's threads.
    func shutdown() {
        workers.shutdown()
    }

    /// Runs `body(part, range)` over `0..<count` split into one range per thread.
    func parallelFor(_ count: Int, work: Int, _ body: (Int, Range<Int>) -> Void) {
        let parts = work < Self.parallelThreshold ? 1 : min(threads, count)
        guard parts > 1 else {
            body(0, 0..<count)
            return
        }
        workers.run(parts: parts) { part in
            body(part, (count * part / parts)..<(count * (part + 1) / parts))
        }
    }

    /// Runs `body(range)` over `0..<count` in chunks of `chunk` that the threads claim in turn, so
    /// a thread slowed by the operating system takes fewer chunks instead of making the others
    /// wait at the end. Worth it for long products (prompt batches); a matrix–vector product is
    /// over too soon to repay the shared counter (110M Q8_0 generation measured 194 tok/s with
    /// chunks against 207–238 with one range per thread).
    func parallelChunks(_ count: Int, chunk: Int, work: Int, _ body: (Int, Range<Int>) -> Void) {
        let parts = work < Self.parallelThreshold ? 1 : min(threads, (count + chunk - 1) / chunk)
        guard parts > 1 else {
            body(0, 0..<count)
            return
        }
        let next = Atomic<Int>(0)
        workers.run(parts: parts) { part in
            while true {
                let start = next.add(chunk, ordering: .relaxed).oldValue
                guard start < count else { return }
                body(part, start..<min(count, start + chunk))
            }
        }
    }

    /// `output[t][r] = matrix[r] · input[t]` for `count` input vectors.
    func multiply(_ matrix: Matrix, _ input: UnsafeMutablePointer<Float>, into output: UnsafeMutablePointer<Float>,
                  count: Int, scratch: Scratch) {
        let rows = matrix.rows, columns = matrix.columns
        if count == 1 && scratch.activations == .quantized, let kernel = matrix.quantizedDotKernel {
            lumen_quantize_q8(input, columns, scratch.quantizedValues, scratch.quantizedScales, scratch.quantizedSums)
            parallelFor(rows, work: rows * columns) { _, range in
                for row in range {
                    output[row] = matrix.dot(row: row, quantized: scratch, kernel: kernel)
                }
            }
            return
        }
        if scratch.activations == .quantized, let levels = matrix.levelsKernel {
            // Each token quantized on its own (values, scales and sums one token after another).
            let blocks = columns / 32
            for token in 0..<count {
                lumen_quantize_q8(input + token * columns, columns, scratch.quantizedValues + token * columns,
                                  scratch.quantizedScales + token * blocks, scratch.quantizedSums + token * 3 * blocks)
            }
            parallelChunks(rows, chunk: Self.rowChunk, work: rows * columns * count) { part, range in
                lumen_matmul_levels_q8(levels, matrix.base + range.lowerBound * matrix.rowBytes, matrix.rowBytes, range.count,
                                       scratch.quantizedValues, scratch.quantizedScales, scratch.quantizedSums, count, columns,
                                       output + range.lowerBound, rows, scratch.rows + part * scratch.rowBuffer, 0)
            }
            return
        }
        parallelFor(rows, work: rows * columns * count) { part, range in
            if count == 1 {
                for row in range { output[row] = matrix.dot(row: row, input) }
            } else if matrix.type == .f32 {
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
}
