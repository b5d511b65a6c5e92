import Foundation
import HTTPTypes
import NIOCore

extension Request {
    /// The request as a curl command line for a POSIX shell (Alamofire's `cURLDescription`):
    /// running it sends the same method, URL, headers and body bytes.
    ///
    /// - Every word is single-quoted where it needs to be, so any header value or file name
    ///   is safe to paste.
    /// - curl's own defaults that this request does not have are switched off (`User-Agent:`,
    ///   `Accept:`, `Expect:`, and the form Content-Type that `--data-binary` implies), and
    ///   `Content-Length`, `Host` and `Transfer-Encoding` are left to curl, which computes them.
    /// - A multipart form becomes `--form-string name=value` and
    ///   `-F 'name=@"path";filename="…";type=…'` parts (curl then writes its own boundary);
    ///   a form with parts curl cannot express is sent as its encoded bytes instead.
    /// - Bytes go in as `--data-binary 'text'`, or through `printf` with octal escapes when
    ///   they are not printable UTF-8; a file as `--data-binary @path`. A body that can only be
    ///   read once (a stream, or stdin) is `--data-binary @-`: pipe the bytes in.
    ///
    /// Credentials are shown as they will be sent (an `Authorization` header); URLs built by
    /// the serializers carry none.
    public var curlDescription: String { curlDescription(adding: []) }

    /// ``curlDescription`` with `arguments` (each one shell word, quoted as needed) right after
    /// `curl`: settings that live outside the request, such as `-L`, `-k`, `--cacert` or `-x`.
    public func curlDescription(adding arguments: [String]) -> String {
        var words = ["curl"] + arguments
        let body = CurlBody(self.body)
        if method == .head {
            words.append("--head")
        } else if !(method == .get && body.isEmpty) && !(method == .post && !body.isEmpty) {
            words += ["-X", method.rawValue]
        }
        let skipped: Set<String> = ["content-length", "host", "transfer-encoding"]
        var names: Set<String> = []
        for field in headerFields {
            let name = field.name.canonicalName
            names.insert(name)
            if skipped.contains(name) || (name == "content-type" && body.formParts != nil) { continue }
            words += ["-H", field.value.isEmpty ? "\(field.name.rawName);" : "\(field.name.rawName): \(field.value)"]
        }
        if !names.contains("user-agent") { words += ["-H", "User-Agent:"] }
        if !names.contains("accept") { words += ["-H", "Accept:"] }
        if !body.isEmpty {
            words += ["-H", "Expect:"]
            if body.formParts == nil, !names.contains("content-type") { words += ["-H", "Content-Type:"] }
            if self.body.contentLength == nil, body.formParts == nil { words += ["-H", "Transfer-Encoding: chunked"] }
        }
        if let timeoutInterval, timeoutInterval.isFinite, timeoutInterval > 0 {
            words += ["--max-time", String(timeoutInterval)]
        }
        words += body.arguments
        words.append(url.absoluteString)
        let command = words.map(CurlDescription.shellQuoted).joined(separator: " ")
        guard let pipe = body.pipedInput else { return command }
        return pipe + " | " + command
    }
}

/// Helpers for ``Request/curlDescription``.
enum CurlDescription {
    /// `word` as one POSIX shell word: bare when it has only characters no shell treats
    /// specially, else single-quoted, with `'` written as `'\''`.
    static func shellQuoted(_ word: String) -> String {
        let safe = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:@%+,=")
        if !word.isEmpty, word.allSatisfy({ safe.contains($0) }) {
            return word
        }
        return "'" + word.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// A `printf` command that writes exactly `bytes`: printable ASCII as itself, everything
    /// else (and `\`, `%`, `'`) as a three-digit octal escape, which POSIX printf understands.
    static func printf<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        var format = ""
        for byte in bytes {
            if byte >= 0x20, byte < 0x7F, byte != UInt8(ascii: "\\"), byte != UInt8(ascii: "%"),
                byte != UInt8(ascii: "'")
            {
                format.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                let octal = String(byte, radix: 8)
                format += "\\" + String(repeating: "0", count: 3 - octal.count) + octal
            }
        }
        return "printf '\(format)'"
    }

    /// True when `bytes` can go in a quoted shell word as they are: UTF-8 without control
    /// characters other than tab, CR and LF.
    static func isPrintableText(_ bytes: [UInt8]) -> Bool {
        guard let text = String(validating: bytes, as: UTF8.self) else { return false }
        return text.unicodeScalars.allSatisfy { $0.value >= 0x20 || $0 == "\t" || $0 == "\n" || $0 == "\r" }
            && !text.unicodeScalars.contains("\u{7F}")
    }

    /// Bodies up to this size are written into the command; larger in-memory ones are piped.
    static let inlineLimit = 1 << 20
}

/// How a body appears on a curl command line.
struct CurlBody {
    /// Arguments that give curl the body.
    var arguments: [String] = []
    /// A command whose output is the body, piped into curl (`printf …` or a file slice).
    var pipedInput: String?
    /// The `-F` / `--form-string` parts, when the body is a form curl can rebuild.
    var formParts: [String]?
    var isEmpty = false

    init(_ body: RequestBody) {
        switch body.storage {
        case .empty:
            isEmpty = true
        case .bytes(let buffer):
            setBytes(Array(buffer.readableBytesView))
        case .file(let path, let offset, let length):
            setFile(path: path, offset: offset, length: length)
        case .source(let source):
            if let form = source as? MultipartFormData, let parts = form.curlFormArguments() {
                formParts = parts
                arguments = parts
            } else if source.isReplayable, let segments = source.segments, segments.count == 1 {
                switch segments[0] {
                case .bytes(let buffer): setBytes(Array(buffer.readableBytesView))
                case .file(let path, let offset, let length): setFile(path: path, offset: offset, length: length)
                }
            } else if let form = source as? MultipartFormData, let data = try? form.encode(),
                data.count <= CurlDescription.inlineLimit
            {
                setBytes(Array(data))
            } else {
                arguments = ["--data-binary", "@-"]
            }
        }
    }

    private mutating func setBytes(_ bytes: [UInt8]) {
        if bytes.isEmpty {
            arguments = ["--data-binary", ""]
        } else if CurlDescription.isPrintableText(bytes), bytes.first != UInt8(ascii: "@") {
            arguments = ["--data-binary", String(decoding: bytes, as: UTF8.self)]
        } else {
            pipedInput = CurlDescription.printf(bytes)
            arguments = ["--data-binary", "@-"]
        }
    }

    private mutating func setFile(path: String, offset: Int64, length: Int64) {
        if path == "/proc/self/fd/0" || path == "/dev/fd/0" || path == "/dev/stdin" {
            // This process's stdin: the same bytes must be piped into curl.
            arguments = ["--data-binary", "@-"]
            return
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int64) ?? nil
        if offset == 0, size == length {
            arguments = ["--data-binary", "@" + path]
        } else {
            pipedInput =
                "tail -c +\(offset + 1) \(CurlDescription.shellQuoted(path)) | head -c \(length)"
            arguments = ["--data-binary", "@-"]
        }
    }
}

extension MultipartFormData {
    /// The form as curl `-F` arguments, or nil when a part has something curl cannot say: a
    /// header other than Content-Disposition and Content-Type, a name with `=`, a file part
    /// whose bytes are in memory, or a stream.
    func curlFormArguments() -> [String]? {
        // The body as runs of bytes and the files between them.
        enum Run {
            case bytes([UInt8])
            case file(String, Int64)
        }
        var runs: [Run] = []
        func appendBytes(_ bytes: [UInt8]) {
            if case .bytes(let previous) = runs.last {
                runs[runs.count - 1] = .bytes(previous + bytes)
            } else {
                runs.append(.bytes(bytes))
            }
        }
        for piece in allPieces {
            switch piece {
            case .inline(let offset, let length):
                guard let bytes = storage.getBytes(at: offset, length: length) else { return nil }
                appendBytes(bytes)
            case .buffer(let buffer): appendBytes(Array(buffer.readableBytesView))
            case .data(let data): appendBytes(Array(data))
            case .file(let path, _): runs.append(.file(path, 0))
            case .stream: return nil
            }
        }
        let opening = Array("--\(boundary.rawValue)\r\n".utf8)
        let between = Array("\r\n--\(boundary.rawValue)\r\n".utf8)
        let closing = Array("\r\n--\(boundary.rawValue)--\r\n".utf8)
        var arguments: [String] = []
        var index = 0
        var pending: [UInt8] = []
        var pendingStart = true
        // Each part: the delimiter, headers, a blank line, then bytes or one file.
        while index < runs.count || !pending.isEmpty {
            if pending.isEmpty, index < runs.count, case .bytes(let bytes) = runs[index] {
                pending = bytes
                index += 1
            }
            let delimiter = pendingStart ? opening : between
            guard pending.starts(with: delimiter) else { return nil }
            pending.removeFirst(delimiter.count)
            pendingStart = false
            guard let headerEnd = pending.firstRange(of: Array("\r\n\r\n".utf8)) else { return nil }
            guard let part = CurlFormPart(headers: Array(pending[..<headerEnd.lowerBound])) else { return nil }
            pending.removeFirst(headerEnd.upperBound)
            if pending.isEmpty, index < runs.count, case .file(let path, _) = runs[index] {
                guard let argument = part.fileArgument(path: path) else { return nil }
                arguments += ["-F", argument]
                index += 1
                if index < runs.count, case .bytes(let bytes) = runs[index] {
                    pending = bytes
                    index += 1
                }
            } else {
                // An in-memory part ends where the next delimiter starts.
                let end = pending.firstRange(of: between)?.lowerBound ?? pending.firstRange(of: closing)?.lowerBound
                guard let end, part.fileName == nil, part.contentType == nil else { return nil }
                let value = Array(pending[..<end])
                guard CurlDescription.isPrintableText(value) else { return nil }
                arguments += ["--form-string", "\(part.name)=\(String(decoding: value, as: UTF8.self))"]
                pending.removeFirst(end)
            }
            if pending == closing { return arguments }
        }
        return nil
    }
}

/// One part's headers, as curl's `-F` can give them.
struct CurlFormPart {
    var name: String
    var fileName: String?
    var contentType: String?

    /// Parses `Content-Disposition: form-data; name="…"[; filename="…"]` and an optional
    /// `Content-Type`; nil for anything else.
    init?(headers: [UInt8]) {
        guard let text = String(validating: headers, as: UTF8.self) else { return nil }
        var name: String?
        for line in text.components(separatedBy: "\r\n") {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let field = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            switch field {
            case "content-disposition":
                guard value.hasPrefix("form-data") else { return nil }
                name = Self.parameter("name", in: value)
                fileName = Self.parameter("filename", in: value)
            case "content-type":
                contentType = value
            default:
                return nil
            }
        }
        guard let name, !name.contains("=") else { return nil }
        self.name = name
    }

    /// `name=@"path";filename="…";type=…`, quoting as curl's form parser reads it: the path
    /// and file name in quotes; the type bare, since curl keeps quotes around a type as part of
    /// it, or as a quoted `headers=` field when it has parameters (`;` is where a bare type ends).
    func fileArgument(path: String) -> String? {
        var argument = "\(name)=@\(Self.curlQuoted(path))"
        if let fileName { argument += ";filename=\(Self.curlQuoted(fileName))" }
        if let contentType {
            let bare = !contentType.isEmpty && !contentType.contains { ";,\" \t".contains($0) }
            argument += bare ? ";type=\(contentType)" : ";headers=\(Self.curlQuoted("Content-Type: " + contentType))"
        }
        return argument
    }

    /// A value in curl's `-F` syntax: in double quotes, with `\` and `"` escaped.
    private static func curlQuoted(_ value: String) -> String {
        "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }

    /// The quoted parameter `key` of a Content-Disposition value, with the form's
    /// percent-escapes of `"`, CR and LF undone.
    private static func parameter(_ key: String, in value: String) -> String? {
        guard let start = value.range(of: "; \(key)=\"") else { return nil }
        let rest = value[start.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end]).replacingOccurrences(of: "%22", with: "\"").replacingOccurrences(
            of: "%0D", with: "\r"
        )
        .replacingOccurrences(of: "%0A", with: "\n")
    }
}
