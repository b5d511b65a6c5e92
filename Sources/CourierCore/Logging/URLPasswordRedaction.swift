extension HeaderRedaction {
    /// `text` with the password of every URL in it (`scheme://user:password@host`) replaced by
    /// ``placeholder``, for messages that quote URLs which may not even parse (a user's typo, a
    /// server's `Location`). The user name stays, so the message still says whose credentials
    /// they were.
    ///
    /// A URL's authority ends at `/`, `?`, `#`, whitespace, a quote or the end of the text
    /// (RFC 3986 §3.2); inside it the user-info ends at the last `@` and the password starts
    /// after the first `:` of the user-info (§3.2.1).
    public static func redactingURLPasswords(in text: String) -> String {
        guard text.contains("://") else { return text }
        var result = ""
        result.reserveCapacity(text.utf8.count)
        var rest = text[...]
        while let separator = rest.range(of: "://") {
            result += rest[..<separator.upperBound]
            let authorityStart = separator.upperBound
            let authorityEnd =
                rest[authorityStart...].firstIndex { character in
                    "/?#\"'<>`".contains(character) || character.isWhitespace
                } ?? rest.endIndex
            let authority = rest[authorityStart..<authorityEnd]
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                result += authority[...colon]
                result += placeholder
                result += authority[at...]
            } else {
                result += authority
            }
            rest = rest[authorityEnd...]
        }
        result += rest
        return result
    }
}
