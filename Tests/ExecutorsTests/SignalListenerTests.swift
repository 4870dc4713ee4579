import Executors
import Foundation
import Testing

@Suite("Signals turned into handler calls", .serialized)
struct SignalListenerTests {
    @Test("a signal raised the moment the listener exists reaches its handler, listener after listener")
    func noSignalLost() async {
        for _ in 0..<200 {
            let (received, continuation) = AsyncStream.makeStream(of: Int32.self)
            let listener = SignalListener(signals: [SIGUSR1]) { continuation.yield($0) }
            kill(getpid(), SIGUSR1)
            var iterator = received.makeAsyncIterator()
            #expect(await iterator.next() == SIGUSR1)
            listener.cancel()
        }
    }

    @Test("each signal listened for is told apart, and cancelling gives back the previous action")
    func previousActionRestored() async {
        signal(SIGUSR2, SIG_IGN)
        let (received, continuation) = AsyncStream.makeStream(of: Int32.self)
        let listener = SignalListener(signals: [SIGUSR1, SIGUSR2]) { continuation.yield($0) }
        kill(getpid(), SIGUSR2)
        kill(getpid(), SIGUSR1)
        var iterator = received.makeAsyncIterator()
        let first = await iterator.next(), second = await iterator.next()
        #expect(Set([first, second]) == [SIGUSR1, SIGUSR2])
        listener.cancel()
        var current = sigaction()
        sigaction(SIGUSR2, nil, &current)
        let handler = current.__sigaction_handler.sa_handler.map { unsafeBitCast($0, to: Int.self) }
        #expect(handler == unsafeBitCast(SIG_IGN, to: Int.self))
        signal(SIGUSR2, SIG_DFL)
    }
}
