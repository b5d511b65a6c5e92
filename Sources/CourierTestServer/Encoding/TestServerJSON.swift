import Foundation

/// A JSON document as the test server reads and writes it.
///
/// The server keeps its own small JSON model so that its output is byte-stable across
/// platforms: keys are written sorted, as httpbin does, and integers stay integers.
package enum TestServerJSON: Equatable, Sendable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([TestServerJSON])
    case object([String: TestServerJSON])

    /// Parses `bytes` as JSON, or returns nil when they are not a JSON document.
    package static func parse<Bytes: Sequence>(_ bytes: Bytes) -> TestServerJSON? where Bytes.Element == UInt8 {
        let data = Data(bytes)
        guard !data.isEmpty else { return nil }
        return try? JSONDecoder().decode(TestServerJSON.self, from: data)
    }

    /// The value at `key` when this is an object.
    package subscript(key: String) -> TestServerJSON? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The string payload, or nil for other kinds.
    package var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The integer payload (a double with no fraction counts), or nil for other kinds.
    package var intValue: Int? {
        switch self {
        case .int(let value): return Int(exactly: value)
        case .double(let value): return Int(exactly: value)
        default: return nil
        }
    }

    /// The array payload, or nil for other kinds.
    package var arrayValue: [TestServerJSON]? {
        if case .array(let items) = self { return items }
        return nil
    }

    /// The object payload, or nil for other kinds.
    package var objectValue: [String: TestServerJSON]? {
        if case .object(let members) = self { return members }
        return nil
    }
}

extension TestServerJSON: Decodable {
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .int(value)
        } else if let value = try? container.decode(Double.self) {
            self = .double(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([TestServerJSON].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: TestServerJSON].self))
        }
    }
}

extension TestServerJSON: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    package init(stringLiteral value: String) { self = .string(value) }
    package init(integerLiteral value: Int64) { self = .int(value) }
    package init(booleanLiteral value: Bool) { self = .bool(value) }
    package init(arrayLiteral elements: TestServerJSON...) { self = .array(elements) }
    package init(dictionaryLiteral elements: (String, TestServerJSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    package init(nilLiteral: ()) { self = .null }
}

extension TestServerJSON {
    /// Wraps an optional string: nil becomes JSON null.
    static func optional(_ text: String?) -> TestServerJSON { text.map(TestServerJSON.string) ?? .null }

    /// The document as pretty-printed UTF-8 with sorted keys and a trailing newline, as httpbin prints.
    func serialized() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(256)
        write(into: &output, indent: 0)
        output.append(UInt8(ascii: "\n"))
        return output
    }

    private func write(into output: inout [UInt8], indent: Int) {
        switch self {
        case .null: output.append(contentsOf: "null".utf8)
        case .bool(let value): output.append(contentsOf: (value ? "true" : "false").utf8)
        case .int(let value): output.append(contentsOf: String(value).utf8)
        case .double(let value):
            // JSON has no NaN or infinity; nothing the server builds produces them, but stay valid.
            output.append(contentsOf: (value.isFinite ? String(value) : "null").utf8)
        case .string(let text): TestServerJSON.writeString(text, into: &output)
        case .array(let items):
            guard !items.isEmpty else { return output.append(contentsOf: "[]".utf8) }
            output.append(contentsOf: "[\n".utf8)
            for (index, item) in items.enumerated() {
                output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent + 2))
                item.write(into: &output, indent: indent + 2)
                output.append(contentsOf: (index == items.count - 1 ? "\n" : ",\n").utf8)
            }
            output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent))
            output.append(UInt8(ascii: "]"))
        case .object(let members):
            guard !members.isEmpty else { return output.append(contentsOf: "{}".utf8) }
            output.append(contentsOf: "{\n".utf8)
            let keys = members.keys.sorted()
            for (index, key) in keys.enumerated() {
                output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent + 2))
                TestServerJSON.writeString(key, into: &output)
                output.append(contentsOf: ": ".utf8)
                members[key, default: .null].write(into: &output, indent: indent + 2)
                output.append(contentsOf: (index == keys.count - 1 ? "\n" : ",\n").utf8)
            }
            output.append(contentsOf: repeatElement(UInt8(ascii: " "), count: indent))
            output.append(UInt8(ascii: "}"))
        }
    }

    private static func writeString(_ text: String, into output: inout [UInt8]) {
        output.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): output.append(contentsOf: "\\\"".utf8)
            case UInt8(ascii: "\\"): output.append(contentsOf: "\\\\".utf8)
            case UInt8(ascii: "\n"): output.append(contentsOf: "\\n".utf8)
            case UInt8(ascii: "\r"): output.append(contentsOf: "\\r".utf8)
            case UInt8(ascii: "\t"): output.append(contentsOf: "\\t".utf8)
            case 0..<0x20:
                let hex = String(byte, radix: 16)
                output.append(contentsOf: ("\\u" + String(repeating: "0", count: 4 - hex.count) + hex).utf8)
            default: output.append(byte)
            }
        }
        output.append(UInt8(ascii: "\""))
    }
}
