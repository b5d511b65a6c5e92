import Foundation

/// Chooses the local file name for `--download` without `--output`, as httpie does, but
/// reduced to a safe base name: no directories, no `..`, no hidden file, no control characters.
///
/// Content-Disposition (RFC 6266: `filename*` with RFC 8187 encoding preferred over `filename`)
/// comes first, then the last URL path segment, then `index`. An extension is added from the
/// Content-Type when the name has none. An existing file is never overwritten: `name-1.ext`,
/// `name-2.ext`, … are tried instead.
enum DownloadFileName {
    /// The longest name produced, in bytes (common file systems allow 255).
    static let maximumLength = 200

    /// The suggested base name for a response.
    static func suggested(contentDisposition: String?, url: URL, contentType: String?) -> String {
        var name = contentDisposition.flatMap(fileName(fromContentDisposition:)).map(sanitized) ?? ""
        if name.isEmpty {
            let segment = url.path.split(separator: "/").last.map(String.init) ?? ""
            name = sanitized(segment.removingPercentEncoding ?? segment)
        }
        if name.isEmpty { name = "index" }
        if !name.contains("."), let ext = contentType.flatMap(fileExtension(forContentType:)) {
            name += "." + ext
        }
        return name
    }

    /// `name` if no file of that name exists in `directory`, else the first free `name-N`.
    static func unique(_ name: String, in directory: URL, exists: (String) -> Bool = { FileManager.default.fileExists(atPath: $0) }) -> String {
        if !exists(directory.appendingPathComponent(name).path) { return name }
        let (stem, ext) = split(name)
        var counter = 1
        while true {
            let candidate = ext.isEmpty ? "\(stem)-\(counter)" : "\(stem)-\(counter).\(ext)"
            if !exists(directory.appendingPathComponent(candidate).path) { return candidate }
            counter += 1
        }
    }

    /// Reduces `raw` to a base name that cannot leave the current directory or hide itself.
    static func sanitized(_ raw: String) -> String {
        // Only what follows the last separator of either kind is a name; the rest is a path.
        let base = raw.split(whereSeparator: { $0 == "/" || $0 == "\\" }).last.map(String.init) ?? ""
        var scalars = String.UnicodeScalarView()
        for scalar in base.unicodeScalars {
            if scalar.value < 0x20 || scalar.value == 0x7F || ":*?\"<>|".unicodeScalars.contains(scalar) {
                scalars.append("_")
            } else {
                scalars.append(scalar)
            }
        }
        var name = String(scalars).trimmingCharacters(in: .whitespaces)
        while name.hasPrefix(".") { name.removeFirst() }
        if name.utf8.count > maximumLength {
            let (stem, ext) = split(name)
            let keep = max(1, maximumLength - ext.utf8.count - 1)
            var shortened = ""
            for character in stem {
                if shortened.utf8.count + String(character).utf8.count > keep { break }
                shortened.append(character)
            }
            name = ext.isEmpty || ext.utf8.count > 16 ? String(shortened) : shortened + "." + ext
        }
        return name
    }

    /// The file name in a Content-Disposition value, preferring `filename*`.
    static func fileName(fromContentDisposition value: String) -> String? {
        var plain: String?
        var extended: String?
        for parameter in parameters(of: value) {
            switch parameter.name.lowercased() {
            case "filename*": extended = decodeExtended(parameter.value)
            case "filename": plain = parameter.value
            default: break
            }
        }
        return extended ?? plain
    }

    /// Splits `a; b=c; d="e;f"` into name/value pairs, honouring quoted strings.
    private static func parameters(of value: String) -> [(name: String, value: String)] {
        var result: [(String, String)] = []
        var segments: [String] = []
        var current = ""
        var inQuotes = false
        var escaped = false
        for character in value {
            if escaped { current.append(character); escaped = false; continue }
            if inQuotes && character == "\\" { escaped = true; continue }
            if character == "\"" { inQuotes.toggle(); continue }
            if character == ";" && !inQuotes { segments.append(current); current = ""; continue }
            current.append(character)
        }
        segments.append(current)
        for segment in segments.dropFirst() {
            guard let equals = segment.firstIndex(of: "=") else { continue }
            let name = segment[..<equals].trimmingCharacters(in: .whitespaces)
            let parameterValue = segment[segment.index(after: equals)...].trimmingCharacters(in: .whitespaces)
            result.append((name, parameterValue))
        }
        return result
    }

    /// RFC 8187: `UTF-8'lang'percent-encoded`.
    private static func decodeExtended(_ value: String) -> String? {
        let parts = value.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].lowercased() == "utf-8" else { return nil }
        return String(parts[2]).removingPercentEncoding
    }

    private static func split(_ name: String) -> (stem: String, ext: String) {
        guard let dot = name.lastIndex(of: "."), dot != name.startIndex else { return (name, "") }
        return (String(name[..<dot]), String(name[name.index(after: dot)...]))
    }

    private static func fileExtension(forContentType contentType: String) -> String? {
        let mime = contentType.split(separator: ";").first?.trimmingCharacters(in: .whitespaces).lowercased() ?? ""
        let table: [String: String] = [
            "application/json": "json", "text/html": "html", "text/plain": "txt", "application/xml": "xml",
            "text/xml": "xml", "image/png": "png", "image/jpeg": "jpg", "image/gif": "gif",
            "application/pdf": "pdf", "application/zip": "zip", "application/gzip": "gz", "text/csv": "csv",
            "application/octet-stream": "bin",
        ]
        return table[mime]
    }
}
