/// The text side of a generation: token pieces in, text out, with incomplete UTF-8 characters
/// held back (`StreamingDetokenizer`) and stop strings cut off (`StopStringFilter`). The session's
/// generation loop samples tokens; this turns them into what the user sees.
struct TextStream {
    private var detokenizer = StreamingDetokenizer()
    private var stops: StopStringFilter

    init(stopStrings: [String]) {
        stops = StopStringFilter(stopStrings: stopStrings)
    }

    /// The text a token's piece releases, and whether a stop string ended the text.
    mutating func append(_ piece: [UInt8]) -> (text: String, stopped: Bool) {
        stops.append(detokenizer.append(piece))
    }

    /// At the end of the generation, the text still held back (the bytes of an incomplete
    /// character, the start of a possible stop string), and whether a stop string ended it.
    mutating func finish() -> (text: String, stopped: Bool) {
        let (tail, stopped) = stops.append(detokenizer.flush())
        return (stopped ? tail : tail + stops.flush(), stopped)
    }
}
