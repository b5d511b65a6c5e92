/// httpie's `--format-options`, `--sorted` and `--unsorted`: how formatted output
/// (`--pretty=all` or `format`) lays out headers and JSON.
///
/// The defaults are httpie's: headers sorted by name, JSON reindented by four with its keys
/// sorted. Each `--format-options` value is a comma-separated list of `section.key:value` pairs
/// (`json.indent:2,headers.sort:false`); `--sorted` and `--unsorted` stand for
/// `headers.sort` and `json.sort_keys` both true or both false. They apply in the order typed.
struct FormatOptions: Sendable, Equatable {
    /// `headers.sort`: response and request headers in name order (a stable sort).
    var sortsHeaders = true
    /// `json.format`: JSON bodies reindented; false leaves their layout (colours still apply).
    var formatsJSON = true
    /// `json.indent`: spaces per level of reindented JSON.
    var jsonIndent = 4
    /// `json.sort_keys`: object keys of reindented JSON in order.
    var sortsJSONKeys = true
    /// `xml.format` and `xml.indent`: checked as httpie checks them; Courier prints XML as it
    /// arrived, so they change nothing.
    var formatsXML = true
    var xmlIndent = 2

    /// The options of `arguments` (the command line without the program's name), applied in order.
    /// - Throws: ``CLIError`` (usage) quoting a malformed pair, an unknown key or a value of the wrong type.
    static func resolve(in arguments: [String]) throws -> FormatOptions {
        var options = FormatOptions()
        for item in OptionSequence.items(in: arguments) {
            switch item {
            case .long("--sorted", _): try options.apply("headers.sort:true,json.sort_keys:true")
            case .long("--unsorted", _): try options.apply("headers.sort:false,json.sort_keys:false")
            case .long("--format-options", let value?): try options.apply(value)
            default: break
            }
        }
        return options
    }

    /// Applies one `--format-options` value.
    /// - Throws: ``CLIError`` (usage) quoting the pair that is malformed, names an unknown key, or
    ///   gives a number where a boolean is expected (or the other way round).
    mutating func apply(_ list: String) throws {
        for pair in list.split(separator: ",", omittingEmptySubsequences: false) {
            let parts = pair.lowercased().split(separator: ":", omittingEmptySubsequences: false)
            guard parts.count == 2, parts[0].split(separator: ".", omittingEmptySubsequences: false).count == 2 else {
                throw CLIError.usage("--format-options: invalid option \"\(pair)\" (expected section.key:value)")
            }
            let key = String(parts[0])
            let value = String(parts[1])
            switch key {
            case "headers.sort": sortsHeaders = try Self.flag(value, in: pair)
            case "json.format": formatsJSON = try Self.flag(value, in: pair)
            case "json.indent": jsonIndent = try Self.count(value, in: pair)
            case "json.sort_keys": sortsJSONKeys = try Self.flag(value, in: pair)
            case "xml.format": formatsXML = try Self.flag(value, in: pair)
            case "xml.indent": xmlIndent = try Self.count(value, in: pair)
            default:
                throw CLIError.usage(
                    "--format-options: invalid key \"\(key)\"; use headers.sort, json.format, json.indent, json.sort_keys, xml.format or xml.indent"
                )
            }
        }
    }

    private static func flag(_ value: String, in pair: Substring) throws -> Bool {
        switch value {
        case "true": return true
        case "false": return false
        default:
            throw CLIError.usage("--format-options: invalid value \"\(value)\" in \"\(pair)\" (expected true or false)")
        }
    }

    private static func count(_ value: String, in pair: Substring) throws -> Int {
        // Digits only, as httpie's int(); a bound keeps a typo from asking for gigabytes of spaces.
        guard !value.isEmpty, value.allSatisfy(\.isASCII), value.allSatisfy(\.isNumber), let number = Int(value),
            number <= 1000
        else {
            throw CLIError.usage(
                "--format-options: invalid value \"\(value)\" in \"\(pair)\" (expected a number, 0 to 1000)")
        }
        return number
    }
}
