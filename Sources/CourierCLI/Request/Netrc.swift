import Foundation

/// Credentials from a `.netrc` file, which httpie (through requests) sends as Basic auth when a
/// request carries none of its own; `--ignore-netrc` turns it off.
///
/// The format is a stream of whitespace-separated tokens: `machine NAME` (or `default`, for any
/// other host) followed by `login`, `password` and `account` pairs, and `macdef NAME`, whose
/// body runs to the next empty line. A value may be quoted with `"`, with `\` escaping the next
/// character; a token that starts with `#` begins a comment to the end of its line. As Python's
/// `netrc` (which requests reads): hosts match without their port, and a host named twice keeps
/// its last entry.
struct Netrc: Equatable {
    struct Entry: Equatable {
        var login: String?
        var password: String?
    }

    /// Entries by host name, lowercased.
    var machines: [String: Entry] = [:]
    /// The `default` entry.
    var fallback: Entry?

    /// Parses the text of a `.netrc` file; what it cannot read is skipped, as requests skips it.
    init(parsing text: String) {
        var tokens = Self.tokens(of: text)[...]
        var current: Entry?
        var currentHost: String?
        func close() {
            guard let entry = current else { return }
            if let host = currentHost {
                machines[host] = entry
            } else {
                fallback = entry
            }
            current = nil
        }
        while let token = tokens.popFirst() {
            switch token.text {
            case "machine":
                close()
                currentHost = tokens.popFirst()?.text.lowercased()
                current = currentHost == nil ? nil : Entry()
            case "default":
                close()
                currentHost = nil
                current = Entry()
            case "login": if let value = tokens.popFirst() { current?.login = value.text }
            case "password": if let value = tokens.popFirst() { current?.password = value.text }
            case "account": _ = tokens.popFirst()
            case "macdef":
                close()
                // The macro's body runs to the next empty line.
                while let next = tokens.first, !next.followsEmptyLine { tokens.removeFirst() }
            default: break
            }
        }
        close()
    }

    /// The login and password for `host` (its own entry, else `default`); nil when there is none
    /// or it has no login.
    func credentials(for host: String) -> (user: String, password: String)? {
        guard let entry = machines[host.lowercased()] ?? fallback, let login = entry.login else { return nil }
        return (login, entry.password ?? "")
    }

    /// The file requests reads: `$NETRC`, else `~/.netrc`, else `~/_netrc`; nil when none can be read.
    static func load(environment: [String: String] = ProcessInfo.processInfo.environment) -> Netrc? {
        let home = environment["HOME"].map { URL(fileURLWithPath: $0) }
        let candidates =
            environment["NETRC"].map { [URL(fileURLWithPath: $0)] }
            ?? [home?.appendingPathComponent(".netrc"), home?.appendingPathComponent("_netrc")].compactMap { $0 }
        for candidate in candidates {
            if let data = try? Data(contentsOf: candidate) {
                return Netrc(parsing: String(decoding: data, as: UTF8.self))
            }
        }
        return nil
    }

    private struct Token {
        var text: String
        /// Whether an empty line stands between this token and the one before it.
        var followsEmptyLine: Bool
    }

    private static func tokens(of text: String) -> [Token] {
        var tokens: [Token] = []
        var current = ""
        var inToken = false
        var quoted = false
        var escaped = false
        var newlines = 0
        var emptyLineBefore = false
        var inComment = false
        func finish() {
            if inToken { tokens.append(Token(text: current, followsEmptyLine: emptyLineBefore)) }
            current = ""
            inToken = false
            emptyLineBefore = false
        }
        for character in text {
            if inComment {
                if character.isNewline {
                    inComment = false
                    newlines += 1
                }
                continue
            }
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" && inToken {
                escaped = true
            } else if quoted {
                if character == "\"" { quoted = false } else { current.append(character) }
            } else if character == "\"" && !inToken {
                inToken = true
                quoted = true
                if newlines >= 2 { emptyLineBefore = true }
                newlines = 0
            } else if character == "#" && !inToken {
                inComment = true
            } else if character.isWhitespace {
                finish()
                if character.isNewline { newlines += 1 }
            } else {
                if !inToken {
                    inToken = true
                    if newlines >= 2 { emptyLineBefore = true }
                    newlines = 0
                }
                current.append(character)
            }
        }
        finish()
        return tokens
    }
}
