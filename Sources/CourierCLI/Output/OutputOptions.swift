/// What parts of the exchange to print (`--print`), and how (`--pretty`).
struct OutputOptions: Sendable, Equatable {
    /// `H`: the request line and headers.
    var requestHeaders = false
    /// `B`: the request body.
    var requestBody = false
    /// `h`: the status line and response headers.
    var responseHeaders = false
    /// `b`: the response body.
    var responseBody = false
    /// `m`: the exchange's metrics after the response (``MetricsPrinter``).
    var metadata = false

    /// Parses a `--print` value such as `HBhb`.
    /// - Throws: ``CLIError`` (usage) quoting the value when it has any other letter.
    init(printSpec: String) throws {
        for character in printSpec {
            switch character {
            case "H": requestHeaders = true
            case "B": requestBody = true
            case "h": responseHeaders = true
            case "b": responseBody = true
            case "m": metadata = true
            default:
                throw CLIError.usage("--print \"\(printSpec)\": unknown part \"\(character)\"; use H, B, h, b and m")
            }
        }
    }

    /// True when anything of the request is printed.
    var printsRequest: Bool { requestHeaders || requestBody }
    /// True when anything of the response is printed.
    var printsResponse: Bool { responseHeaders || responseBody }

    /// The last of `--print`, `-h`, `-b` and `--meta` in `arguments` (the command line without
    /// the program's name), as a `--print` value; nil when none is there. httpie lets the last of
    /// them win, over the others and over `-v` (`-v -b` prints the body alone), which
    /// ArgumentParser's flags cannot tell, so the command line is read here in order.
    static func lastPrintChoice(in arguments: [String]) -> String? {
        var choice: String?
        for item in OptionSequence.items(in: arguments) {
            switch item {
            case .long("--headers", _), .short("h", _): choice = "h"
            case .long("--body", _), .short("b", _): choice = "b"
            case .long("--meta", _): choice = "m"
            case .long("--print", let value), .short("p", let value): choice = value ?? choice
            default: break
            }
        }
        return choice
    }

    /// httpie's defaults: `-v` prints the whole exchange and `-vv` its metrics too, `--meta`
    /// only the metrics, `--offline` the request, a redirected stdout only the response body, a
    /// terminal the response headers and body.
    static func resolve(
        print: String?, verbose: Int, headersOnly: Bool, bodyOnly: Bool, offline: Bool, stdoutIsTerminal: Bool,
        meta: Bool = false
    ) throws -> OutputOptions {
        if let print { return try OutputOptions(printSpec: print) }
        if verbose > 0 { return try OutputOptions(printSpec: offline || verbose == 1 ? "HBhb" : "HBhbm") }
        if meta { return try OutputOptions(printSpec: "m") }
        if headersOnly { return try OutputOptions(printSpec: "h") }
        if bodyOnly { return try OutputOptions(printSpec: "b") }
        if offline { return try OutputOptions(printSpec: "HB") }
        return try OutputOptions(printSpec: stdoutIsTerminal ? "hb" : "b")
    }
}

/// `--pretty`: whether to colour and/or reformat output.
enum PrettyOption: String, Sendable, CaseIterable {
    case all, colors, format, none

    /// Colours are used.
    var colors: Bool { self == .all || self == .colors }
    /// JSON is reindented and headers sorted.
    var format: Bool { self == .all || self == .format }

    /// Parses a `--pretty` value; nil means the default for the terminal.
    /// - Throws: ``CLIError`` (usage) quoting an unknown value.
    static func resolve(_ value: String?, stdoutIsTerminal: Bool) throws -> PrettyOption {
        guard let value else { return stdoutIsTerminal ? .all : .none }
        guard let option = PrettyOption(rawValue: value) else {
            throw CLIError.usage("--pretty \"\(value)\": expected all, colors, format or none")
        }
        return option
    }
}

/// `--progress`: when to draw progress bars on stderr.
enum ProgressOption: String, Sendable, CaseIterable {
    case auto, always, never

    /// Parses a `--progress` value.
    /// - Throws: ``CLIError`` (usage) quoting an unknown value.
    static func parse(_ value: String) throws -> ProgressOption {
        guard let option = ProgressOption(rawValue: value) else {
            throw CLIError.usage("--progress \"\(value)\": expected auto, always or never")
        }
        return option
    }

    /// Whether bars are drawn, given whether stderr is a terminal.
    func enabled(stderrIsTerminal: Bool) -> Bool {
        switch self {
        case .auto: return stderrIsTerminal
        case .always: return true
        case .never: return false
        }
    }
}
