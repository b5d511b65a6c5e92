import Foundation

/// The Netscape cookies.txt format that curl reads with `-b` and writes with `-c`: one cookie a
/// line, seven tab-separated fields (domain, include-subdomains flag, path, secure flag,
/// expiry in Unix seconds with 0 for a session cookie, name, value). A `#HttpOnly_` prefix on
/// the domain marks an HttpOnly cookie; other lines starting with `#` are comments.
extension CookieJar {
    /// Reads cookies.txt text and stores its cookies; expired ones are skipped. Nothing is
    /// stored unless every line is valid.
    /// - Returns: how many cookies were stored.
    /// - Throws: ``CourierError`` `.invalidCookieFile` quoting the first malformed line and its number.
    @discardableResult
    public func loadNetscapeCookies(_ text: String) throws -> Int {
        let date = Date()
        var cookies: [Cookie] = []
        var lineNumber = 0
        // `isNewline` splits at LF, CR and CRLF (one Character) alike.
        for rawLine in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline) {
            lineNumber += 1
            var line = rawLine
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) { continue }
            var httpOnly = false
            if line.hasPrefix("#HttpOnly_") {
                httpOnly = true
                line = line.dropFirst("#HttpOnly_".count)
            } else if line.hasPrefix("#") {
                continue
            }
            let cookie = try Self.cookie(fromNetscapeLine: line, httpOnly: httpOnly, lineNumber: lineNumber)
            if !cookie.isExpired(at: date) { cookies.append(cookie) }
        }
        for cookie in cookies { setCookie(cookie) }
        return cookies.count
    }

    /// Reads a cookies.txt file (see ``loadNetscapeCookies(_:)``).
    /// - Returns: how many cookies were stored.
    /// - Throws: ``CourierError`` `.invalidFile` when the file cannot be read as UTF-8, or
    ///   `.invalidCookieFile` for a malformed line.
    @discardableResult
    public func loadNetscapeCookieFile(at fileURL: URL) throws -> Int {
        let text: String
        do {
            text = try String(contentsOf: fileURL, encoding: .utf8)
        } catch {
            throw CourierError(
                .invalidFile, "cannot read the cookie file \(fileURL.path) as UTF-8 text",
                offendingInput: fileURL.path, underlyingError: error)
        }
        do {
            return try loadNetscapeCookies(text)
        } catch var error as CourierError {
            error.message = "\(fileURL.path): \(error.message)"
            throw error
        }
    }

    /// The jar's unexpired cookies as cookies.txt text, session cookies with expiry 0, sorted by
    /// domain, path and name so the output is stable.
    public func netscapeCookieFileContents() -> String {
        let date = Date()
        var text = "# Netscape HTTP Cookie File\n# Written by Courier; curl reads it with -b.\n\n"
        for cookie in allCookies where !cookie.isExpired(at: date) {
            if cookie.httpOnly { text += "#HttpOnly_" }
            text += cookie.hostOnly ? cookie.domain : "." + cookie.domain
            text += cookie.hostOnly ? "\tFALSE\t" : "\tTRUE\t"
            text += cookie.path
            text += cookie.secure ? "\tTRUE\t" : "\tFALSE\t"
            text += String(cookie.expires.map { Self.unixSeconds($0) } ?? 0)
            text += "\t\(cookie.name)\t\(cookie.value)\n"
        }
        return text
    }

    /// Writes ``netscapeCookieFileContents()`` to `fileURL`, atomically.
    /// - Throws: ``CourierError`` `.invalidFile` when the file cannot be written.
    public func saveNetscapeCookieFile(to fileURL: URL) throws {
        do {
            try Data(netscapeCookieFileContents().utf8).write(to: fileURL, options: .atomic)
        } catch {
            throw CourierError(
                .invalidFile, "cannot write the cookie file \(fileURL.path)", offendingInput: fileURL.path,
                underlyingError: error)
        }
    }

    /// Expiry seconds in the file's range: at least 1 (0 means "session") and at most what
    /// 64-bit readers such as curl accept.
    private static func unixSeconds(_ date: Date) -> Int64 {
        let seconds = date.timeIntervalSince1970.rounded(.down)
        guard seconds >= 1 else { return 1 }
        return seconds >= 253_402_300_799 ? 253_402_300_799 : Int64(seconds)  // 9999-12-31T23:59:59Z
    }

    private static func cookie(fromNetscapeLine line: Substring, httpOnly: Bool, lineNumber: Int) throws -> Cookie {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
        func failure(_ reason: String) -> CourierError {
            CourierError(
                .invalidCookieFile,
                "line \(lineNumber) of the cookie file \(reason): \"\(HeaderField.escaped(String(line)))\"",
                offendingInput: String(line))
        }
        // Some writers drop the tab before an empty value.
        guard fields.count == 7 || fields.count == 6 else {
            throw failure("has \(fields.count) tab-separated fields, not 7")
        }
        func flag(_ text: Substring, _ field: String) throws -> Bool {
            switch text.uppercased() {
            case "TRUE": return true
            case "FALSE": return false
            default: throw failure("has \"\(text)\" for \(field), not TRUE or FALSE")
            }
        }
        let includeSubdomains = try flag(fields[1], "include-subdomains")
        let secure = try flag(fields[3], "secure")
        guard let seconds = Int64(fields[4]), seconds >= 0 else {
            throw failure("has \"\(fields[4])\" for the expiry, not a count of seconds")
        }
        do {
            return try Cookie(
                name: String(fields[5]), value: fields.count == 7 ? String(fields[6]) : "",
                domain: String(fields[0]), hostOnly: !includeSubdomains, path: String(fields[2]),
                expires: seconds == 0 ? nil : Date(timeIntervalSince1970: TimeInterval(seconds)),
                secure: secure, httpOnly: httpOnly)
        } catch let error as CourierError {
            throw CourierError(
                .invalidCookieFile, "line \(lineNumber) of the cookie file: \(error.message)",
                offendingInput: String(line), underlyingError: error)
        }
    }
}
