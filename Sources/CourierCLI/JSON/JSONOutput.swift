/// How `--pretty` and the format options print a JSON text: reindented by ``JSONPrinter`` (and
/// coloured when colours are on), coloured in its own layout, or left as it came, as httpie
/// prints it (`--pretty=colors` and `json.format:false` colour the body without moving a byte).
enum JSONOutput: Sendable {
    case reindented(JSONPrinter)
    case coloured
    case asIs

    init(pretty: PrettyOption, format: FormatOptions) {
        if pretty.format, format.formatsJSON {
            self = .reindented(
                JSONPrinter(
                    pretty: true, colors: pretty.colors, indent: format.jsonIndent, sortsKeys: format.sortsJSONKeys))
        } else {
            self = pretty.colors ? .coloured : .asIs
        }
    }

    /// `text` as this says to print it; nil when it is not JSON, which the caller prints as it is.
    func render<Text: Collection>(_ text: Text) -> [UInt8]? where Text.Element == UInt8 {
        if case .asIs = self { return nil }
        guard let value = try? JSONParser.parse(text) else { return nil }
        switch self {
        case .reindented(let printer):
            // Past the bound the body is printed as it came, as for text that is not JSON.
            return printer.string(for: value, limit: Self.formattedLimit(forBodyOf: text.count)).map { Array($0.utf8) }
        case .coloured: return Self.coloured(Array(text))
        case .asIs: return nil
        }
    }

    /// The most bytes a reindented body may take: ordinary JSON grows a few times when indented,
    /// and a body whose indentation would make it hundreds of times larger is printed as sent.
    static func formattedLimit(forBodyOf count: Int) -> Int {
        let (scaled, overflow) = count.multipliedReportingOverflow(by: 16)
        return overflow ? .max : max(scaled, 1 << 20)
    }

    /// `json` (valid JSON) with ANSI colours around its keys, strings, numbers and literals, and
    /// every other byte, whitespace included, where it was.
    static func coloured(_ json: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(json.count + json.count / 2)
        func paint(_ range: Range<Int>, _ colour: String) {
            output.append(contentsOf: colour.utf8)
            output.append(contentsOf: json[range])
            output.append(contentsOf: ANSI.reset.utf8)
        }
        var index = 0
        while index < json.count {
            switch json[index] {
            case UInt8(ascii: "\""):
                var end = index + 1
                while end < json.count, json[end] != UInt8(ascii: "\"") {
                    end += json[end] == UInt8(ascii: "\\") ? 2 : 1
                }
                end = min(end + 1, json.count)
                var next = end
                while next < json.count, Self.isWhitespace(json[next]) { next += 1 }
                paint(index..<end, next < json.count && json[next] == UInt8(ascii: ":") ? ANSI.key : ANSI.string)
                index = end
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                var end = index + 1
                while end < json.count, Self.continuesNumber(json[end]) { end += 1 }
                paint(index..<end, ANSI.number)
                index = end
            case UInt8(ascii: "t"), UInt8(ascii: "f"), UInt8(ascii: "n"):
                var end = index + 1
                while end < json.count, (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(json[end]) { end += 1 }
                paint(index..<end, ANSI.literal)
                index = end
            default:
                output.append(json[index])
                index += 1
            }
        }
        return output
    }

    private static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }

    private static func continuesNumber(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "e")
            || byte == UInt8(ascii: "E") || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-")
    }
}
