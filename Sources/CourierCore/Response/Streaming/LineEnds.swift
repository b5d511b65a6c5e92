/// CR, LF and CR LF line ends in a byte stream that arrives in chunks (HTML §9.2.5 for event
/// streams, and text lines generally): a CR that ends one chunk and an LF that starts the next
/// are one line end, not two.
struct LineEnds: Sendable {
    static let lineFeed = UInt8(ascii: "\n")
    static let carriageReturn = UInt8(ascii: "\r")

    /// A CR ended the last chunk, so an LF at the start of the next one belongs to it.
    private var pendingCarriageReturn = false

    /// Steps `index` past an LF that completes a CR left at the end of the previous chunk.
    mutating func skipContinuation(at index: inout Int, in bytes: UnsafeRawBufferPointer) {
        guard pendingCarriageReturn, index < bytes.count else { return }
        pendingCarriageReturn = false
        if bytes[index] == Self.lineFeed { index += 1 }
    }

    /// Steps `index` past the line end that starts at it (an LF, a CR, or a CR LF), remembering
    /// a CR that is the chunk's last byte.
    mutating func skipLineEnd(at index: inout Int, in bytes: UnsafeRawBufferPointer) {
        let byte = bytes[index]
        index += 1
        guard byte == Self.carriageReturn else { return }
        if index == bytes.count {
            pendingCarriageReturn = true
        } else if bytes[index] == Self.lineFeed {
            index += 1
        }
    }
}
