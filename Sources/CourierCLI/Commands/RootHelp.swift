import ArgumentParser

/// `courier --help` as httpie's `http --help`: the request usage and every request option
/// first, since sending a request is what the command is for, then the subcommands.
///
/// The request is the root command's default subcommand, so the parser's own root help
/// would list only the subcommands; this one is the request command's help with the
/// subcommands added.
enum RootHelp {
    /// Subcommand names that, when present, leave `--help` to the parser (`courier serve --help`).
    static let subcommandNames: Set<String> = ["serve", "demo", "request", "help"]

    /// True for `courier --help` and `courier help` with no subcommand named.
    static func isRequested(_ arguments: [String]) -> Bool {
        if arguments == ["help"] { return true }
        return arguments.contains("--help") && !arguments.contains { subcommandNames.contains($0) }
    }

    /// The text printed for it.
    static func text(columns: Int? = nil) -> String {
        var help = CourierCommand.helpMessage(for: RequestCommand.self, columns: columns)
        let overview = "OVERVIEW: \(CourierCommand.configuration.abstract)"
        if let range = help.range(of: "OVERVIEW: \(RequestCommand.configuration.abstract)") {
            help.replaceSubrange(range, with: overview)
        }
        // Usage first, as httpie prints it.
        if let usage = help.range(of: "USAGE: "), let end = help[usage.lowerBound...].range(of: "\n\n") {
            let usageText = help[usage.lowerBound..<end.upperBound]
            help = String(usageText) + String(help[..<usage.lowerBound]) + String(help[end.upperBound...])
        }
        var lines = ["", "SUBCOMMANDS:"]
        for command in [ServeCommand.self, DemoCommand.self] as [any ParsableCommand.Type] {
            let name = command.configuration.commandName ?? ""
            lines.append(
                "  " + name.padding(toLength: 24, withPad: " ", startingAt: 0) + command.configuration.abstract)
        }
        lines.append("")
        lines.append("  See 'courier help <subcommand>' for detailed help.")
        return help.trimmingTrailingNewlines() + "\n" + lines.joined(separator: "\n") + "\n"
    }
}

extension String {
    fileprivate func trimmingTrailingNewlines() -> String {
        var text = self
        while text.hasSuffix("\n") { text.removeLast() }
        return text
    }
}
