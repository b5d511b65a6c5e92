/// Splits a header value such as `form-data; name="a"; filename*=UTF-8''%C3%A9` into its main
/// value and its parameters (names lowercased), unquoting quoted strings.
///
/// A `name*` parameter (RFC 8187 extended notation) is percent-decoded and stored under both
/// `name*` and, when no plain `name` exists, `name`.
struct HeaderParameters {
    var value: String
    var parameters: [String: String]

    init(parsing header: String) {
        var items: [String] = []
        var current = ""
        var inQuotes = false
        var escaped = false
        for character in header {
            if escaped {
                current.append(character)
                escaped = false
            } else if inQuotes && character == "\\" {
                current.append(character)
                escaped = true
            } else if character == "\"" {
                inQuotes.toggle()
                current.append(character)
            } else if character == ";" && !inQuotes {
                items.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        items.append(current)
        value = items[0].trimmingWhitespace()
        parameters = [:]
        var extended: [String: String] = [:]
        for item in items.dropFirst() {
            guard let equals = item.firstIndex(of: "=") else { continue }
            let name = item[..<equals].trimmingWhitespace().lowercased()
            var raw = item[item.index(after: equals)...].trimmingWhitespace()
            if raw.count >= 2, raw.hasPrefix("\""), raw.hasSuffix("\"") {
                raw = HeaderParameters.unquote(raw.dropFirst().dropLast())
            }
            if name.hasSuffix("*") {
                parameters[name] = raw
                extended[String(name.dropLast())] = HeaderParameters.decodeExtended(raw)
            } else {
                parameters[name] = raw
            }
        }
        for (name, decoded) in extended where parameters[name] == nil {
            parameters[name] = decoded
        }
    }

    private static func unquote(_ text: Substring) -> String {
        var result = ""
        var escaped = false
        for character in text {
            if !escaped && character == "\\" {
                escaped = true
                continue
            }
            escaped = false
            result.append(character)
        }
        return result
    }

    /// `charset'language'percent-encoded`; only the bytes are decoded, as UTF-8.
    private static func decodeExtended(_ text: String) -> String {
        let pieces = text.split(separator: "'", maxSplits: 2, omittingEmptySubsequences: false)
        let encoded = pieces.count == 3 ? pieces[2] : Substring(text)
        return FormURLDecoding.decode(encoded, plusIsSpace: false)
    }
}

extension StringProtocol {
    func trimmingWhitespace() -> String {
        var slice = Substring(self)
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return String(slice)
    }
}
