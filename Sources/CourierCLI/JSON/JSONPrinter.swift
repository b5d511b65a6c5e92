/// Writes ``OrderedJSON``s back as text: compact as httpie sends them (`{"a": "1", "b": 2}`), or
/// indented with sorted keys as httpie shows them, optionally in ANSI colours.
struct JSONPrinter {
    /// One member or element per line, indented by ``indent`` (httpie's `--pretty=format`).
    var pretty: Bool
    /// ANSI colours (httpie's `--pretty=colors`).
    var colors: Bool
    /// Spaces per level when ``pretty`` (httpie's `json.indent`).
    var indent = 4
    /// Object keys in order when ``pretty`` (httpie's `json.sort_keys`).
    var sortsKeys = true

    /// The text for `value`.
    func string(for value: OrderedJSON) -> String {
        var output = ""
        var budget = Int.max
        write(value, level: 0, into: &output, budget: &budget)
        return output
    }

    /// The text for `value`, or nil once it would pass `limit` UTF-8 bytes. Indentation grows
    /// with depth, so a hostile document (500 nested arrays around a long flat one) formats to
    /// thousands of times its size: a caller bounds what it is willing to build.
    func string(for value: OrderedJSON, limit: Int) -> String? {
        var output = ""
        var budget = limit
        write(value, level: 0, into: &output, budget: &budget)
        return budget < 0 ? nil : output
    }

    /// Appends `value`; `budget` counts down the bytes still allowed and stops the walk below 0.
    private func write(_ value: OrderedJSON, level: Int, into output: inout String, budget: inout Int) {
        guard budget >= 0 else { return }
        let before = output.utf8.count
        defer { budget -= output.utf8.count - before }
        switch value {
        case .object(let members):
            if members.isEmpty { output += "{}"; return }
            let ordered =
                pretty && sortsKeys
                ? members.sorted { $0.key.unicodeScalars.lexicographicallyPrecedes($1.key.unicodeScalars) } : members
            output += "{"
            for (position, member) in ordered.enumerated() {
                if position > 0 { output += pretty ? "," : ", " }
                if pretty { output += "\n" + String(repeating: " ", count: level + self.indent) }
                output += paint(quoted(member.key), ANSI.key)
                output += ": "
                var left = budget - (output.utf8.count - before)
                write(member.value, level: level + self.indent, into: &output, budget: &left)
                if left < 0 { return }
            }
            if pretty { output += "\n" + String(repeating: " ", count: level) }
            output += "}"
        case .array(let elements):
            if elements.isEmpty { output += "[]"; return }
            output += "["
            for (position, element) in elements.enumerated() {
                if position > 0 { output += pretty ? "," : ", " }
                if pretty { output += "\n" + String(repeating: " ", count: level + self.indent) }
                var left = budget - (output.utf8.count - before)
                write(element, level: level + self.indent, into: &output, budget: &left)
                if left < 0 { return }
            }
            if pretty { output += "\n" + String(repeating: " ", count: level) }
            output += "]"
        case .string(let text): output += paint(quoted(text), ANSI.string)
        case .number(let text): output += paint(text, ANSI.number)
        case .bool(let flag): output += paint(flag ? "true" : "false", ANSI.literal)
        case .null: output += paint("null", ANSI.literal)
        }
    }

    private func paint(_ text: String, _ color: String) -> String {
        colors ? color + text + ANSI.reset : text
    }

    /// `text` as a JSON string literal; non-ASCII stays as it is (httpie's `ensure_ascii=False`).
    func quoted(_ text: String) -> String {
        var output = "\""
        output.reserveCapacity(text.utf8.count + 2)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": output += "\\\""
            case "\\": output += "\\\\"
            case "\n": output += "\\n"
            case "\r": output += "\\r"
            case "\t": output += "\\t"
            case "\u{08}": output += "\\b"
            case "\u{0C}": output += "\\f"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    output += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    output.unicodeScalars.append(scalar)
                }
            }
        }
        return output + "\""
    }
}

/// The ANSI escape sequences Courier colours with.
enum ANSI {
    static let reset = "\u{1B}[0m"
    static let key = "\u{1B}[34m"
    static let string = "\u{1B}[33m"
    static let number = "\u{1B}[36m"
    static let literal = "\u{1B}[35m"
    static let headerName = "\u{1B}[36m"
    static let method = "\u{1B}[32m"
    static let statusOK = "\u{1B}[32m"
    static let statusRedirect = "\u{1B}[33m"
    static let statusError = "\u{1B}[31m"
    static let dim = "\u{1B}[2m"
}
