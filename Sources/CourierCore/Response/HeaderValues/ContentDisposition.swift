// Standard library only: Fuzz/ compiles this folder alone with swiftc.

/// A parsed `Content-Disposition` response header (RFC 6266), as a download names its file.
///
/// ```swift
/// let disposition = ContentDisposition("attachment; filename=\"a.txt\"; filename*=UTF-8''%E2%82%AC.txt")
/// disposition?.fileName       // "€.txt" — filename* wins over filename (RFC 6266 §4.3)
/// disposition?.safeFileName   // "€.txt" — never a path: use this one to write to disk
/// ```
///
/// The type and parameter names are case-insensitive and stored lower-cased. A repeated
/// parameter name makes the whole value invalid (RFC 6266 §4.1). An extended parameter
/// (`name*=`) whose value cannot be decoded is ignored, so the plain `filename` still applies.
public struct ContentDisposition: Sendable, Hashable {
    /// One parameter: the name lower-cased, the value unquoted (or RFC 8187-decoded for `name*`).
    public typealias Parameter = HeaderParameter

    /// The disposition type, lower-cased: `attachment`, `inline`, `form-data` or an extension token.
    public var type: String
    /// The parameters that were valid, in the order the server sent them.
    public var parameters: [Parameter]

    /// Parses a header value; nil when it does not follow RFC 6266's grammar or repeats a parameter.
    ///
    /// Cost: one pass over the value.
    public init?(_ headerValue: String) {
        var scanner = HeaderValueScanner(headerValue)
        scanner.skipWhitespace()
        guard let type = scanner.consumeToken(), let raw = scanner.consumeParameters() else { return nil }
        var seen = Set<String>()
        var parameters: [Parameter] = []
        parameters.reserveCapacity(raw.count)
        for parameter in raw {
            guard seen.insert(parameter.name).inserted else { return nil }
            if parameter.name.hasSuffix("*") {
                // RFC 8187 values are never quoted; a quoted or undecodable one is dropped.
                guard !parameter.wasQuoted, let decoded = ExtendedParameterValue.decode(parameter.value) else {
                    continue
                }
                parameters.append(Parameter(name: parameter.name, value: decoded))
            } else {
                parameters.append(Parameter(name: parameter.name, value: parameter.value))
            }
        }
        self.type = HeaderByte.lowercased(type)
        self.parameters = parameters
    }

    /// The value of the parameter named `name` (case-insensitive; include the `*` for extended ones).
    public func parameter(_ name: String) -> String? {
        parameters.value(named: name)
    }

    /// True for `attachment` (RFC 6266 §4.2: unknown types are handled as attachments too).
    public var isAttachment: Bool { type != "inline" }

    /// The file name as the server sent it: `filename*` when present and decodable, else `filename`.
    ///
    /// This may be a path or contain `..`; write files with ``safeFileName`` instead.
    public var fileName: String? {
        parameter("filename*") ?? parameter("filename")
    }

    /// The `name` parameter, as in a `form-data` part.
    public var name: String? { parameter("name") }

    /// ``fileName`` reduced to a safe base name (see ``safeFileName(from:maxUTF8Length:)``), or nil.
    public var safeFileName: String? {
        fileName.flatMap { Self.safeFileName(from: $0) }
    }

    /// Reduces a server-chosen file name to a base name that is safe to create in a directory.
    ///
    /// The result keeps the last path component (after `/` or `\`), drops control characters
    /// (C0, DEL, C1) and bidirectional-override characters, collapses runs of dots, and trims
    /// dots and spaces from both ends, so it never contains `/`, `\`, `..` or NUL, is never empty,
    /// `.` or `..`, and never names a hidden file. It is cut to `maxUTF8Length` bytes (at least 16)
    /// on a character boundary, keeping a short extension.
    /// Returns nil when nothing usable is left.
    public static func safeFileName(from candidate: String, maxUTF8Length: Int = 255) -> String? {
        let limit = max(16, maxUTF8Length)
        let components = candidate.split(whereSeparator: { $0 == "/" || $0 == "\\" })
        for component in components.reversed() {
            let cleaned = sanitizedComponent(Substring(component))
            if !cleaned.isEmpty { return truncated(cleaned, toUTF8Length: limit) }
        }
        return nil
    }

    private static func sanitizedComponent(_ component: Substring) -> String {
        var scalars = String.UnicodeScalarView()
        var previousWasDot = false
        for scalar in component.unicodeScalars where !isUnsafeScalar(scalar) {
            let isDot = scalar == "."
            if isDot && previousWasDot { continue }
            previousWasDot = isDot
            scalars.append(scalar)
        }
        return trimmingDotsAndSpaces(String(scalars))
    }

    private static func isUnsafeScalar(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true  // C0, DEL, C1 controls
        case 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return true  // bidi marks and overrides
        case 0x2F, 0x5C: return true  // separators, in case a caller passes a single component
        default: return false
        }
    }

    /// Trims `.` and space scalars from both ends (a leading dot would make a hidden file).
    private static func trimmingDotsAndSpaces(_ text: String) -> String {
        let scalars = text.unicodeScalars
        let isTrimmed: (Unicode.Scalar) -> Bool = { $0 == "." || $0 == " " }
        guard let first = scalars.firstIndex(where: { !isTrimmed($0) }),
            let last = scalars.lastIndex(where: { !isTrimmed($0) })
        else { return "" }
        return String(scalars[first...last])
    }

    /// Cuts `name` to at most `limit` UTF-8 bytes on a scalar boundary, keeping an extension
    /// of up to 16 bytes; nil if nothing is left.
    private static func truncated(_ name: String, toUTF8Length limit: Int) -> String? {
        guard name.utf8.count > limit else { return name }
        let scalars = name.unicodeScalars
        var stemEnd = scalars.endIndex
        var fileExtension = ""
        if let dot = scalars.lastIndex(of: "."), name.utf8[dot...].count <= 16 {
            stemEnd = dot
            fileExtension = String(scalars[dot...])
        }
        let stemLimit = limit - fileExtension.utf8.count
        var kept = String.UnicodeScalarView()
        var keptLength = 0
        for scalar in scalars[..<stemEnd] {
            let length = UTF8.width(scalar)
            if keptLength + length > stemLimit { break }
            kept.append(scalar)
            keptLength += length
        }
        let stem = trimmingDotsAndSpaces(String(kept))
        // Without a stem the extension alone would start with a dot (a hidden file).
        let result = stem.isEmpty ? trimmingDotsAndSpaces(fileExtension) : stem + fileExtension
        return result.isEmpty ? nil : result
    }
}
