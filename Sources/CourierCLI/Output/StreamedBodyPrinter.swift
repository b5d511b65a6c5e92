import Courier
import NIOCore

/// Prints a response body as it arrives, for `--stream` and for `text/event-stream` responses
/// (httpie's `--stream`: behave like `tail -f`).
///
/// Raw output (`--pretty=none` off a terminal) writes every chunk the moment it arrives, with no
/// buffering. Otherwise the body is cut into lines and every complete line is written as soon as
/// its chunk is in, formatted on its own: each line of an NDJSON body (any media type whose
/// subtype mentions json) is printed as `--pretty` prints JSON; each line of an event stream gets
/// its field name coloured, its comments dimmed, and a `data` value that is JSON printed as
/// compact JSON, so that one event stays one block. A line longer than ``lineLimit`` is passed
/// through unformatted, so memory stays bounded. On a terminal, a NUL byte stops the output with
/// httpie's binary note.
struct StreamedBodyPrinter {
    /// Lines longer than this are written through as they arrive, unformatted.
    static let lineLimit = 1 << 20

    /// How each line is formatted.
    enum LineFormat: Equatable {
        case text
        case jsonLines
        case eventStream

        /// The format for a response's `Content-Type`.
        init(contentType: String?) {
            guard let type = contentType.flatMap(MediaType.init) else {
                self = .text
                return
            }
            if type.type == "text" && type.subtype == "event-stream" {
                self = .eventStream
            } else if ["json", "javascript", "text"].contains(where: { type.essence.contains($0) }) {
                // As httpie: a line that parses as JSON is formatted under any of these types.
                self = .jsonLines
            } else {
                self = .text
            }
        }
    }

    var pretty: PrettyOption
    var stdoutIsTerminal: Bool
    /// How JSON lines are laid out (`--format-options`, `--sorted`).
    var format = FormatOptions()
    /// The charset each line is decoded from (`--response-charset`), nil to leave the bytes.
    var charset: String.Encoding?

    private static let lineFeed = UInt8(ascii: "\n")
    private static let carriageReturn = UInt8(ascii: "\r")

    /// Writes `chunks` to stdout as they arrive; returns the number of body bytes.
    /// - Throws: ``CLIError`` when stdout fails (the caller's exchange then stops), and what
    ///   `chunks` throws.
    @discardableResult
    func write<Chunks: AsyncSequence>(_ chunks: Chunks, contentType: String?) async throws -> Int64
    where Chunks.Element == ByteBuffer {
        var total: Int64 = 0
        if !stdoutIsTerminal && pretty == .none {
            for try await chunk in chunks {
                total += Int64(chunk.readableBytes)
                try chunk.withUnsafeReadableBytes { try StandardStreams.writeAll($0, to: 1) }
            }
            return total
        }
        let lines = LineFormatter(
            format: LineFormat(contentType: contentType), pretty: pretty,
            json: JSONOutput(pretty: pretty, format: format), charset: charset)
        var partial: [UInt8] = []
        var passingThrough = false
        var lastWritten: UInt8?
        for try await chunk in chunks {
            total += Int64(chunk.readableBytes)
            if stdoutIsTerminal, chunk.readableBytesView.contains(0) {
                try StandardStreams.writeOut(MessagePrinter.binaryNote + "\n")
                return total
            }
            var output: [UInt8] = []
            var start = chunk.readableBytesView.startIndex
            let view = chunk.readableBytesView
            while start < view.endIndex {
                guard let end = view[start...].firstIndex(of: Self.lineFeed) else {
                    if passingThrough {
                        output.append(contentsOf: view[start...])
                    } else {
                        partial.append(contentsOf: view[start...])
                        if partial.count > Self.lineLimit {
                            output.append(contentsOf: partial)
                            partial.removeAll()
                            passingThrough = true
                        }
                    }
                    break
                }
                if passingThrough {
                    output.append(contentsOf: view[start...end])
                    passingThrough = false
                } else {
                    partial.append(contentsOf: view[start..<end])
                    if partial.last == Self.carriageReturn { partial.removeLast() }
                    lines.append(line: partial, to: &output)
                    partial.removeAll(keepingCapacity: partial.capacity <= 64 * 1024)
                }
                start = view.index(after: end)
            }
            if !output.isEmpty {
                try StandardStreams.writeOut(output)
                lastWritten = output.last
            }
        }
        var output: [UInt8] = []
        if !partial.isEmpty {
            lines.append(line: partial, to: &output)
            if !stdoutIsTerminal, output.last == Self.lineFeed { output.removeLast() }
        }
        if !output.isEmpty {
            try StandardStreams.writeOut(output)
            lastWritten = output.last
        }
        if stdoutIsTerminal, let lastWritten, lastWritten != Self.lineFeed { try StandardStreams.writeOut("\n") }
        return total
    }
}

/// Formats one line at a time as ``StreamedBodyPrinter`` prints it.
struct LineFormatter {
    var format: StreamedBodyPrinter.LineFormat
    var pretty: PrettyOption
    /// How a JSON line is printed.
    var json: JSONOutput
    /// The charset lines are decoded from before they are formatted; nil leaves the bytes.
    var charset: String.Encoding?

    /// Appends `line` (without its line end), decoded and formatted, and a line feed to `output`.
    func append(line: [UInt8], to output: inout [UInt8]) {
        var line = line
        if let charset {
            // Lossy as httpie's: what does not decode is shown as UTF-8 with U+FFFD.
            line = Array((String(bytes: line, encoding: charset) ?? String(decoding: line, as: UTF8.self)).utf8)
        }
        switch format {
        case .jsonLines where pretty != .none:
            if let rendered = json.render(line) {
                output.append(contentsOf: rendered)
            } else {
                output.append(contentsOf: line)
            }
        case .eventStream where pretty != .none:
            appendEventLine(line, to: &output)
        default:
            output.append(contentsOf: line)
        }
        output.append(UInt8(ascii: "\n"))
    }

    /// `field: value`, the name coloured; a comment dimmed; JSON data compact (one line per
    /// field, so events keep their shape).
    private func appendEventLine(_ line: [UInt8], to output: inout [UInt8]) {
        guard let first = line.first else { return }
        if first == UInt8(ascii: ":") {
            paint(line, ANSI.dim, to: &output)
            return
        }
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            paint(line, ANSI.headerName, to: &output)
            return
        }
        let name = line[..<colon]
        var valueStart = colon + 1
        if valueStart < line.count, line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
        let value = line[valueStart...]
        paint(name, ANSI.headerName, to: &output)
        output.append(contentsOf: ": ".utf8)
        if name.elementsEqual("data".utf8), value.first == UInt8(ascii: "{") || value.first == UInt8(ascii: "["),
            let json = try? JSONParser.parse(value)
        {
            output.append(contentsOf: JSONPrinter(pretty: false, colors: pretty.colors).string(for: json).utf8)
        } else {
            output.append(contentsOf: value)
        }
    }

    private func paint<Bytes: Collection>(_ bytes: Bytes, _ color: String, to output: inout [UInt8])
    where Bytes.Element == UInt8 {
        guard pretty.colors else {
            output.append(contentsOf: bytes)
            return
        }
        output.append(contentsOf: color.utf8)
        output.append(contentsOf: bytes)
        output.append(contentsOf: ANSI.reset.utf8)
    }
}
