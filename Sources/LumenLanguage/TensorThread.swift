import Executors
import Tensors

/// The thread tensor operations run on: one long-lived thread of its own (off Swift's
/// cooperative pool), so an operation costs no thread start; it splits large work across the
/// cores itself (`Tensors`' worker pool). Operations from concurrent cells run one after another.
public actor TensorThread {
    /// The one thread of the process.
    public static let shared = TensorThread()

    private let executor = ThreadExecutor(name: "lumen-tensor")

    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// `compute`'s result, computed on the thread.
    public func run(_ compute: @Sendable () throws(TensorError) -> Tensor) throws(TensorError) -> Tensor {
        try compute()
    }
}
