import Courier
import Foundation
import HTTPTypes
import NIOCore

/// Prints requests and responses in httpie's layout: a start line, `Name: value` lines, a blank
/// line (all CRLF), then the body.
///
/// Raw output streams the body through unchanged in constant memory; formatted or coloured
/// output buffers up to ``formatLimit`` to reindent JSON, and binary bodies are never written
/// to a terminal.
struct MessagePrinter: Sendable {
    /// Bodies larger than this are not reformatted, only passed through.
    static let formatLimit = 16 << 20

    static let binaryNote =
        "+-----------------------------------------+\n| NOTE: binary data not shown in terminal |\n+-----------------------------------------+"

    /// Printed by `-v` in place of a body streamed from stdin, which can be read only once.
    static let streamedNote =
        "+------------------------------------------+\n| NOTE: streamed body (stdin) not shown    |\n+------------------------------------------+"

    var pretty: PrettyOption
    var stdoutIsTerminal: Bool
    /// How formatted output lays out headers and JSON (`--format-options`, `--sorted`).
    var format = FormatOptions()
    /// The type and charset a response body is printed by (`--response-mime`, `--response-charset`).
    var responseDisplay = ResponseDisplayType()

    /// The request line and headers as they go on the wire, with the Host, Content-Length or
    /// Transfer-Encoding that the transport adds.
    func requestHead(_ request: Request, chunked: Bool) -> String {
        var lines: [(name: String, text: String)] = []
        var fields = request.headerFields
        if !request.body.isEmpty, fields[.contentLength] == nil, fields[.transferEncoding] == nil {
            if !chunked, let length = request.body.contentLength {
                fields.append(HTTPField(name: .contentLength, value: String(length)))
            } else {
                fields.append(HTTPField(name: .transferEncoding, value: "chunked"))
            }
        }
        if let hostName = HTTPField.Name("Host"), fields[hostName] == nil, let host = Self.hostHeader(for: request.url)
        {
            fields.append(HTTPField(name: hostName, value: host))
        }
        // HTTPFields keeps a `Cookie` value as one field per pair; the transport sends them as
        // one line (RFC 6265 §5.4), and that is what is shown, where the first of them stood.
        let cookies = fields[values: .cookie]
        var cookieShown = false
        for field in fields {
            if field.name == .cookie, cookies.count > 1 {
                if !cookieShown {
                    let joined = HTTPField(name: .cookie, value: cookies.joined(separator: "; "))
                    lines.append((joined.name.rawName, headerLine(joined)))
                }
                cookieShown = true
                continue
            }
            lines.append((field.name.rawName, headerLine(field)))
        }
        return head(startLine(method: request.method.rawValue, target: Self.target(of: request.url)), lines)
    }

    /// The start line and the header lines, sorted by name when formatted output asks for it
    /// (httpie's `headers.sort`: a stable sort, names compared as they are written).
    private func head(_ startLine: String, _ headers: [(name: String, text: String)]) -> String {
        var headers = headers
        if pretty.format, format.sortsHeaders {
            headers = headers.enumerated().sorted { left, right in
                if left.element.name == right.element.name { return left.offset < right.offset }
                return left.element.name.unicodeScalars.lexicographicallyPrecedes(right.element.name.unicodeScalars)
            }.map(\.element)
        }
        return ([startLine] + headers.map(\.text)).joined(separator: "\r\n") + "\r\n\r\n"
    }

    /// The status line and headers of a response.
    func responseHead(_ head: ResponseHead) -> String {
        // The version the response came in; HTTP/2 has no reason phrase on the wire (RFC 9113 §8.3.2).
        let version = head.httpVersion ?? .http11
        var status =
            version.major >= 2
            ? "\(version) \(head.statusCode)" : "\(version) \(head.statusCode) \(head.status.reasonPhrase)"
        if pretty.colors {
            let color =
                head.statusCode < 300 ? ANSI.statusOK : head.statusCode < 400 ? ANSI.statusRedirect : ANSI.statusError
            status = color + status + ANSI.reset
        }
        return self.head(status, head.headerFields.map { ($0.name.rawName, headerLine($0)) })
    }

    private func startLine(method: String, target: String) -> String {
        pretty.colors ? "\(ANSI.method)\(method)\(ANSI.reset) \(target) HTTP/1.1" : "\(method) \(target) HTTP/1.1"
    }

    private func headerLine(_ field: HTTPField) -> String {
        pretty.colors
            ? "\(ANSI.headerName)\(field.name.rawName)\(ANSI.reset): \(field.value)"
            : "\(field.name.rawName): \(field.value)"
    }

    /// The request target: the percent-encoded path (at least `/`) and query.
    static func target(of url: URL) -> String {
        guard let components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "/" }
        var target = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { target += "?" + query }
        return target
    }

    /// `host[:port]`, the port only when it is not the scheme's default.
    static func hostHeader(for url: URL) -> String? {
        guard var host = url.host else { return nil }
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
        if let port = url.port {
            let scheme = url.scheme?.lowercased()
            if !((scheme == "http" && port == 80) || (scheme == "https" && port == 443)) { return "\(host):\(port)" }
        }
        return host
    }

    /// Writes a body from `chunks` to stdout; returns the number of bytes it had.
    /// `decodesCharset`: on a terminal, text is decoded from `contentType`'s charset even when it
    /// is valid UTF-8 (`--response-charset`); otherwise only text that is not UTF-8 is.
    @discardableResult
    func writeBody<Chunks: AsyncSequence>(_ chunks: Chunks, contentType: String?, decodesCharset: Bool = false)
        async throws -> Int64
    where Chunks.Element == ByteBuffer {
        let passThrough = !stdoutIsTerminal && pretty == .none
        var total: Int64 = 0
        if passThrough {
            for try await chunk in chunks {
                total += Int64(chunk.readableBytes)
                try chunk.withUnsafeReadableBytes { try StandardStreams.writeAll($0, to: 1) }
            }
            return total
        }
        var buffered: [UInt8] = []
        var overflowed = false
        var binary = false
        var lastWritten: UInt8?
        for try await chunk in chunks {
            total += Int64(chunk.readableBytes)
            if binary { continue }
            if overflowed {
                try chunk.withUnsafeReadableBytes { try StandardStreams.writeAll($0, to: 1) }
                lastWritten = chunk.readableBytesView.last ?? lastWritten
                continue
            }
            buffered.append(contentsOf: chunk.readableBytesView)
            if stdoutIsTerminal, buffered.contains(0) {
                binary = true
                continue
            }
            if buffered.count > Self.formatLimit {
                if stdoutIsTerminal, String(validating: buffered, as: UTF8.self) == nil {
                    binary = true
                    continue
                }
                overflowed = true
                try StandardStreams.writeOut(buffered)
                lastWritten = buffered.last
                buffered = []
            }
        }
        if binary {
            try StandardStreams.writeOut(Self.binaryNote + "\n")
            return total
        }
        // A charset forced with --response-charset decodes the body whenever the output is
        // formatted or a terminal, as httpie does; otherwise only a terminal's text that is not UTF-8 is.
        let decodes =
            decodesCharset
            ? stdoutIsTerminal || pretty != .none
            : stdoutIsTerminal && String(validating: buffered, as: UTF8.self) == nil
        if !overflowed, !buffered.isEmpty, decodes {
            guard let text = Self.terminalText(buffered, contentType: contentType, lossy: decodesCharset) else {
                try StandardStreams.writeOut(Self.binaryNote + "\n")
                return total
            }
            buffered = Array(text.utf8)
        }
        if !overflowed {
            let output = formatted(buffered, contentType: contentType)
            try StandardStreams.writeOut(output)
            lastWritten = output.last
        }
        // On a terminal the body ends with a line break, so the prompt starts on a line of its
        // own; it comes after the formatted text, so any colour reset precedes it.
        if stdoutIsTerminal, let lastWritten, lastWritten != UInt8(ascii: "\n") { try StandardStreams.writeOut("\n") }
        return total
    }

    /// Text that is not UTF-8, as a terminal should show it: decoded from the charset that
    /// Content-Type names, or for a `text/*` type without a known one, from UTF-8 with U+FFFD
    /// for what does not decode (as httpie shows it); nil for a body to treat as binary.
    /// `lossy` (a charset the user forced): never nil; bytes that do not decode in the charset
    /// are shown as UTF-8 with U+FFFD, as httpie replaces them.
    static func terminalText(_ body: [UInt8], contentType: String?, lossy: Bool = false) -> String? {
        guard let mediaType = contentType.flatMap(MediaType.init) else {
            return lossy ? String(decoding: body, as: UTF8.self) : nil
        }
        if let charset = mediaType.charset, let encoding = Self.encoding(forCharset: charset),
            let text = String(bytes: body, encoding: encoding)
        {
            return text
        }
        guard mediaType.type == "text" || lossy else { return nil }
        return String(decoding: body, as: UTF8.self)
    }

    /// The charset names ``encoding(forCharset:)`` knows, one of each group, for messages.
    static let knownCharsets = [
        "utf-8", "utf-16", "utf-16le", "utf-16be", "utf-32", "iso-8859-1", "windows-1252", "iso-8859-2",
        "windows-1250", "windows-1251", "shift_jis", "euc-jp", "iso-2022-jp", "macroman",
    ]

    /// The Foundation encoding of a charset name, for the ones common on the web; case, `-` and
    /// `_` do not matter (`UTF_8`, `latin-1` and `ISO8859-1` all name one).
    static func encoding(forCharset charset: String) -> String.Encoding? {
        let name = String(charset.lowercased().unicodeScalars.filter { $0 != "-" && $0 != "_" })
        switch name {
        case "utf8": return .utf8
        case "utf16": return .utf16
        case "utf16le": return .utf16LittleEndian
        case "utf16be": return .utf16BigEndian
        case "utf32": return .utf32
        case "utf32le": return .utf32LittleEndian
        case "utf32be": return .utf32BigEndian
        case "iso88591", "latin1", "l1", "usascii", "ascii", "iso8859": return .isoLatin1
        case "windows1252", "cp1252": return .windowsCP1252
        case "iso88592", "latin2", "l2": return .isoLatin2
        case "windows1250", "cp1250": return .windowsCP1250
        case "windows1251", "cp1251": return .windowsCP1251
        case "shiftjis", "sjis": return .shiftJIS
        case "eucjp": return .japaneseEUC
        case "iso2022jp": return .iso2022JP
        case "macroman", "macintosh": return .macOSRoman
        default: return nil
        }
    }

    /// Writes a response body as ``writeBody(_:contentType:decodesCharset:)`` does, by the type
    /// and charset `--response-mime` and `--response-charset` give in place of `served`.
    @discardableResult
    func writeResponseBody<Chunks: AsyncSequence>(_ chunks: Chunks, served: String?) async throws -> Int64
    where Chunks.Element == ByteBuffer {
        try await writeBody(
            chunks, contentType: responseDisplay.contentType(for: served),
            decodesCharset: responseDisplay.charset != nil)
    }

    /// JSON reindented and/or coloured as `--pretty` asks; anything else unchanged.
    func formatted(_ body: [UInt8], contentType: String?) -> [UInt8] {
        guard pretty != .none, !body.isEmpty else { return body }
        // As httpie: a body that parses as JSON under any media type naming json, javascript or
        // text (application/problem+json, text/plain, text/html); without a usable
        // Content-Type, sniff the body.
        let looksLikeJSON =
            contentType.flatMap(MediaType.init).map { media in
                ["json", "javascript", "text"].contains { "\(media.type)/\(media.subtype)".contains($0) }
            }
            ?? (body.first(where: { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 }).map {
                $0 == UInt8(ascii: "{") || $0 == UInt8(ascii: "[")
            } ?? false)
        guard looksLikeJSON, var rendered = JSONOutput(pretty: pretty, format: format).render(body) else { return body }
        // httpie's colouring (Pygments) ends the text with a line feed.
        if pretty.colors, rendered.last != UInt8(ascii: "\n") { rendered.append(UInt8(ascii: "\n")) }
        return rendered
    }
}
