import Courier
import Foundation

/// httpie's `--response-mime` and `--response-charset`: the media type that the response body
/// is formatted by, and the charset it is decoded from for the terminal, in place of what its
/// `Content-Type` says. Only what is printed changes; a download's file keeps the bytes as served.
struct ResponseDisplayType: Sendable, Equatable {
    /// `--response-mime`, as `type/subtype`.
    var mime: String?
    /// `--response-charset`, lower-cased.
    var charset: String?

    /// Checks both options.
    /// - Throws: ``CLIError`` (usage) for a value that is not `type/subtype`, or a charset that
    ///   Courier cannot decode.
    static func parse(mime: String?, charset: String?) throws -> ResponseDisplayType {
        var display = ResponseDisplayType()
        if let mime {
            // As httpie: one slash, whatever else; parameters are dropped.
            guard mime.filter({ $0 == "/" }).count == 1 else {
                throw CLIError.usage("--response-mime \"\(mime)\": expected a type/subtype such as application/json")
            }
            let essence = mime.split(separator: ";", maxSplits: 1)[0].trimmingCharacters(in: .whitespaces)
            display.mime = MediaType(essence)?.essence ?? essence.lowercased()
        }
        if let charset {
            let name = charset.lowercased()
            guard MessagePrinter.encoding(forCharset: name) != nil else {
                throw CLIError.usage(
                    "--response-charset \"\(charset)\": not an encoding Courier decodes; use one of \(MessagePrinter.knownCharsets.joined(separator: ", "))"
                )
            }
            display.charset = name
        }
        return display
    }

    /// The `Content-Type` to print a body served as `served` by: the options' type and charset
    /// where given, the served ones otherwise (`text/plain` when only a charset is given and
    /// nothing was served).
    func contentType(for served: String?) -> String? {
        guard mime != nil || charset != nil else { return served }
        let parsed = served.flatMap(MediaType.init)
        let essence = mime ?? parsed?.essence ?? "text/plain"
        guard let charset = charset ?? parsed?.charset else { return essence }
        return essence + "; charset=" + charset
    }
}
