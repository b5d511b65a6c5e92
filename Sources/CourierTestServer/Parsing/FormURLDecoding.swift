/// Decodes `application/x-www-form-urlencoded` text and URL query strings into ordered pairs.
///
/// Malformed escapes are kept literally (as browsers and werkzeug do) rather than rejected,
/// because the server's job is to show a client what it sent.
enum FormURLDecoding {
    /// Splits `text` on `&`, then each item on its first `=`, decoding `+` and `%XX`.
    static func pairs(_ text: Substring) -> [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        for item in text.split(separator: "&", omittingEmptySubsequences: true) {
            if let equals = item.firstIndex(of: "=") {
                result.append((decode(item[..<equals]), decode(item[item.index(after: equals)...])))
            } else {
                result.append((decode(item), ""))
            }
        }
        return result
    }

    /// Percent-decodes `text`, turning `+` into a space; invalid UTF-8 becomes U+FFFD.
    static func decode(_ text: Substring, plusIsSpace: Bool = true) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        let utf8 = Array(text.utf8)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%"), index + 2 < utf8.count,
                let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
                continue
            }
            bytes.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
            index += 1
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// Groups pairs as httpbin's `args` and `form` do: one value stays a string, repeats become a list.
    static func multiDictionary(_ pairs: [(name: String, value: String)]) -> TestServerJSON {
        var grouped: [String: [String]] = [:]
        for pair in pairs { grouped[pair.name, default: []].append(pair.value) }
        return .object(
            grouped.mapValues { values in
                values.count == 1 ? .string(values[0]) : .array(values.map(TestServerJSON.string))
            })
    }
}
