/// Parses request items with httpie's separator table and backslash escapes.
///
/// The earliest separator in the token wins; at the same position the longest one does, so
/// `a:=1` is a raw JSON field and not a header `a` with value `=1`. A backslash before a
/// separator character makes it literal (`a\=b=c` is the field `a=b` with value `c`); before
/// any other character the backslash stays.
enum RequestItemParser {
    /// Characters that can start a separator, and so can be escaped.
    static let separatorCharacters: Set<Character> = [":", "=", "@", ";"]

    /// Separators, longest first, so that a tie at one position goes to the longest.
    static let separators: [RequestItem.Kind] = RequestItem.Kind.allCases.sorted {
        $0.separator.count > $1.separator.count
    }

    /// Whether `token` looks like a request item (has an unescaped separator).
    static func isItem(_ token: String) -> Bool {
        (try? parse(token)) != nil
    }

    /// Parses one token.
    /// - Throws: ``CLIError`` (usage) quoting the token when it has no separator, a header
    ///   name is empty or invalid, or a file field's `;type=` is empty.
    static func parse(_ token: String) throws -> RequestItem {
        // Split into runs of literal text; escaped separator characters become their own
        // pieces that are never searched for separators.
        var pieces: [(text: String, escaped: Bool)] = [("", false)]
        var characters = token.makeIterator()
        while let character = characters.next() {
            if character == "\\" {
                guard let next = characters.next() else {
                    pieces[pieces.count - 1].text.append("\\")
                    break
                }
                if separatorCharacters.contains(next) {
                    pieces.append((String(next), true))
                    pieces.append(("", false))
                } else {
                    pieces[pieces.count - 1].text.append("\\")
                    pieces[pieces.count - 1].text.append(next)
                }
            } else {
                pieces[pieces.count - 1].text.append(character)
            }
        }

        for (index, piece) in pieces.enumerated() where !piece.escaped {
            guard let (kind, range) = firstSeparator(in: piece.text) else { continue }
            let key = pieces[..<index].map(\.text).joined() + piece.text[..<range.lowerBound]
            let value = String(piece.text[range.upperBound...]) + pieces[(index + 1)...].map(\.text).joined()
            return try makeItem(kind: kind, key: key, value: value, original: token)
        }
        throw CLIError.usage(
            "\"\(token)\": not a request item; expected one of Header:Value, Header;, name==value, "
                + "name=value, name:=json, name@file, name=@file, name:=@file, @file")
    }

    private static func firstSeparator(in text: String) -> (RequestItem.Kind, Range<String.Index>)? {
        var best: (RequestItem.Kind, Range<String.Index>)?
        for kind in separators {
            guard let range = text.range(of: kind.separator) else { continue }
            if let current = best, current.1.lowerBound <= range.lowerBound { continue }
            best = (kind, range)
        }
        return best
    }

    private static func makeItem(kind: RequestItem.Kind, key: String, value: String, original: String) throws
        -> RequestItem
    {
        var item = RequestItem(kind: kind, key: key, value: value, mimeType: nil, original: original)
        switch kind {
        case .header, .emptyHeader:
            guard !key.isEmpty else { throw CLIError.usage("\"\(original)\": the header name is empty") }
            guard HeaderSyntax.isToken(key) else {
                throw CLIError.usage("\"\(original)\": \"\(key)\" is not a valid header name")
            }
            if kind == .emptyHeader, !value.isEmpty {
                // `Name;value` is not an item httpie knows either; `;` only makes an empty header.
                throw CLIError.usage("\"\(original)\": use Name:Value for a header, or Name; for an empty one")
            }
            if value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) {
                throw CLIError.usage("\"\(original)\": a header value must not contain CR, LF or NUL")
            }
        case .fileField:
            if let typeRange = value.range(of: ";type=", options: .backwards) {
                let mime = String(value[typeRange.upperBound...])
                guard !mime.isEmpty else { throw CLIError.usage("\"\(original)\": ;type= needs a MIME type") }
                item.mimeType = mime
                item.value = String(value[..<typeRange.lowerBound])
            }
            guard !item.value.isEmpty else { throw CLIError.usage("\"\(original)\": the file path is empty") }
        case .dataFieldFromFile, .rawJSONFieldFromFile:
            guard !value.isEmpty else { throw CLIError.usage("\"\(original)\": the file path is empty") }
        case .query, .dataField, .rawJSONField:
            break
        }
        return item
    }
}

/// RFC 9110 token checks, for header names typed on the command line.
enum HeaderSyntax {
    /// True when `text` is a non-empty RFC 9110 token.
    static func isToken(_ text: String) -> Bool {
        !text.isEmpty
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"):
                    return true
                default:
                    return "!#$%&'*+-.^_`|~".utf8.contains(byte)
                }
            }
    }
}
