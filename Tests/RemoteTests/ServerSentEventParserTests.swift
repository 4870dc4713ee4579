import OpenAIAPI
import Testing

/// The event-stream format by the WHATWG HTML standard's own examples (§9.2.6, "Interpreting an
/// event stream"), fed whole and split at every byte.
struct ServerSentEventParserTests {
    /// The standard's examples and the events it says they dispatch.
    static let examples: [(stream: String, events: [ServerSentEventParser.Event])] = [
        ("data: YHOO\ndata: +2\ndata: 10\n\n", [.init(name: nil, data: "YHOO\n+2\n10")]),
        (": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n",
         [.init(name: nil, data: "first event"), .init(name: nil, data: "second event"), .init(name: nil, data: " third event")]),
        ("data\n\ndata\ndata\n\ndata:", [.init(name: nil, data: ""), .init(name: nil, data: "\n")]),
        ("data:test\n\ndata: test\n\n", [.init(name: nil, data: "test"), .init(name: nil, data: "test")]),
        ("event: add\r\ndata: 73857293\r\n\r\nevent: remove\rdata: 2153\r\rdata: [DONE]\n\n",
         [.init(name: "add", data: "73857293"), .init(name: "remove", data: "2153"), .init(name: nil, data: "[DONE]")]),
    ]

    @Test(arguments: examples.indices)
    func standardExamplesWholeAndSplitAnywhere(_ index: Int) throws {
        let (stream, expected) = Self.examples[index]
        let bytes = Array(stream.utf8)
        for split in 0...bytes.count {
            var parser = ServerSentEventParser()
            let events = try parser.feed(bytes[..<split]) + parser.feed(bytes[split...])
            #expect(events == expected, "split at \(split)")
        }
        var parser = ServerSentEventParser()
        let byByte = try bytes.flatMap { try parser.feed([$0]) }
        #expect(byByte == expected)
    }

    @Test func anUnfinishedEventIsNotDispatched() throws {
        var parser = ServerSentEventParser()
        #expect(try parser.feed(Array("data: {\"id\"".utf8)).isEmpty)
        #expect(parser.hasPartialEvent)
    }

    @Test func anOverlongLineIsAnError() {
        var parser = ServerSentEventParser(maximumLineLength: 8)
        #expect(throws: ServerSentEventParser.LineTooLong.self) { try parser.feed(Array("data: 0123456789".utf8)) }
    }
}
