import Executors
import GenerationTypes
import Synchronization

/// A session of a `SessionPool`, held by one request: given back exactly once, by `release()` or
/// when the lease is dropped, so a request that ends early (a client that left, a cancelled cell)
/// still frees its session.
public final class SessionLease: Sendable {
    /// The session's index in its pool.
    public let index: Int
    /// The session.
    public let session: ModelSession
    private let places: FairPool
    private let released = Atomic<Bool>(false)

    init(index: Int, session: ModelSession, places: FairPool) {
        self.index = index
        self.session = session
        self.places = places
    }

    /// Gives the session back (again: nothing).
    public func release() {
        if !released.exchange(true, ordering: .acquiringAndReleasing) { places.release(index) }
    }

    /// `ModelSession.generate(_:options:pipeline:stop:)` holding the session until the
    /// generation ends, then giving it back.
    public func generate(_ prompt: String, options: GenerationOptions = GenerationOptions(), pipeline: GenerationPipeline? = nil,
                         stop: StopSignal = StopSignal()) -> AsyncThrowingStream<TokenEvent, any Error> {
        session.stream(.text(prompt), options: options, pipeline: pipeline, stop: stop, lease: self)
    }

    /// `ModelSession.generate(tokens:options:pipeline:stop:startingFrom:)` holding the session
    /// until the generation ends, then giving it back.
    public func generate(tokens: [Int32], options: GenerationOptions = GenerationOptions(), pipeline: GenerationPipeline? = nil,
                         stop: StopSignal = StopSignal(), startingFrom inherited: ModelSession.CachedPrefix? = nil) -> AsyncThrowingStream<TokenEvent, any Error> {
        session.stream(.tokens(tokens), options: options, pipeline: pipeline, stop: stop, inherited: inherited, lease: self)
    }

    deinit {
        release()
    }
}
