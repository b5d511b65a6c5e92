import Foundation

/// Where `--session NAME|PATH` lives, as httpie decides it: a value with a `/` is a file
/// path (`~` expanded); a name is `$XDG_CONFIG_HOME/courier/sessions/HOST/NAME.json`
/// (`~/.config` when the variable is unset), HOST being the URL's `host[_port]`, so a named
/// session belongs to one host.
enum SessionLocation {
    /// The session file for `value` and the request's `url`.
    /// - Throws: ``CLIError`` (usage) for a name with characters other than letters, digits, `_.-`;
    ///   ``CLIError`` for a name when HOME is not an existing directory.
    static func file(for value: String, url: URL, environment: [String: String] = ProcessInfo.processInfo.environment)
        throws -> URL
    {
        if value.contains("/") { return URL(fileURLWithPath: (value as NSString).expandingTildeInPath) }
        guard !value.isEmpty, value.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || "_.-".contains($0)) }),
            value != ".", value != ".."
        else {
            throw CLIError.usage(
                "--session \"\(value)\": a session name has only letters, digits, '_', '.' and '-' (or give a path with a '/')"
            )
        }
        let base: URL
        if let config = environment["XDG_CONFIG_HOME"], !config.isEmpty {
            base = URL(fileURLWithPath: config)
        } else {
            let home = environment["HOME"] ?? NSHomeDirectory()
            // A service account's HOME is often a placeholder (`/nonexistent`); as root, making
            // the sessions directory would create it.
            var isDirectory: ObjCBool = false
            guard !home.isEmpty, FileManager.default.fileExists(atPath: home, isDirectory: &isDirectory),
                isDirectory.boolValue
            else {
                throw CLIError.failure(
                    "--session \"\(value)\": the home directory \"\(home)\" does not exist (give a path with a '/' or set XDG_CONFIG_HOME)"
                )
            }
            base = URL(fileURLWithPath: home).appendingPathComponent(".config")
        }
        return base.appendingPathComponent("courier/sessions").appendingPathComponent(hostDirectory(for: url))
            .appendingPathComponent("\(value).json")
    }

    /// `host` or `host_port`, as httpie names the directory (`:` is not allowed everywhere).
    static func hostDirectory(for url: URL) -> String {
        var host = url.host ?? "localhost"
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        host = host.replacingOccurrences(of: ":", with: "_").replacingOccurrences(of: "/", with: "_")
        if let port = url.port { host += "_\(port)" }
        return host
    }
}
