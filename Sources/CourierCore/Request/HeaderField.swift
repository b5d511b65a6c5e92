import HTTPTypes

/// Validation of header names and values before they enter a request.
///
/// swift-http-types quietly turns CR, LF and NUL in a value into spaces; Courier refuses them
/// instead, so that a caller learns about the bad input rather than sending a changed header.
package enum HeaderField {
    /// Returns a field for `name: value`.
    /// - Throws: ``CourierError`` `.invalidHeader` when the name is not a token or the value has CR, LF or NUL.
    package static func make(name: String, value: String) throws -> HTTPField {
        HTTPField(name: try fieldName(name), value: try checkedValue(value, for: name))
    }

    /// Returns the field name for `name`.
    /// - Throws: ``CourierError`` `.invalidHeader` when `name` is not an RFC 9110 token.
    static func fieldName(_ name: String) throws -> HTTPField.Name {
        guard let fieldName = HTTPField.Name(name) else {
            throw CourierError(
                .invalidHeader, "header name \"\(escaped(name))\" is not a valid RFC 9110 token",
                offendingInput: name)
        }
        return fieldName
    }

    /// Returns `value` unchanged if it has no CR, LF or NUL.
    /// - Throws: ``CourierError`` `.invalidHeader` naming the header otherwise.
    static func checkedValue(_ value: String, for name: String) throws -> String {
        if value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0x00 }) {
            throw CourierError(
                .invalidHeader,
                "value of header \"\(escaped(name))\" contains CR, LF or NUL: \"\(escaped(value))\"",
                offendingInput: value)
        }
        return value
    }

    /// Makes control characters visible in error messages.
    static func escaped(_ text: String) -> String {
        text.unicodeScalars.map { scalar in
            switch scalar {
            case "\r": return "\\r"
            case "\n": return "\\n"
            case "\0": return "\\0"
            default: return String(scalar)
            }
        }.joined()
    }
}
