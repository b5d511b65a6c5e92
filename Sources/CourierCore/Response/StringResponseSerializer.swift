import Foundation

/// Validates a response and decodes its body as text (Alamofire's StringResponseSerializer).
///
/// The encoding is, in order: ``encoding`` when set, the `charset` parameter of `Content-Type`
/// (RFC 9110 §8.3.2), else ``fallbackEncoding`` (UTF-8 by default). An empty body gives "".
public struct StringResponseSerializer: ValidatingResponseSerializer {
    public var acceptableStatusCodes: Set<Int>?
    public var acceptableContentTypes: Set<String>?
    public var emptyResponseCodes = ResponseSerializerDefaults.emptyResponseCodes
    public var emptyRequestMethods = ResponseSerializerDefaults.emptyRequestMethods
    /// An encoding that overrides the response's charset; nil to follow the response.
    public var encoding: String.Encoding?
    /// The encoding used when the response names none, or names one Courier does not know.
    public var fallbackEncoding: String.Encoding

    /// Makes a string serializer that accepts any content type.
    public init(
        encoding: String.Encoding? = nil,
        fallbackEncoding: String.Encoding = .utf8,
        acceptableStatusCodes: Set<Int>? = ResponseSerializerDefaults.acceptableStatusCodes,
        acceptableContentTypes: Set<String>? = nil
    ) {
        self.encoding = encoding
        self.fallbackEncoding = fallbackEncoding
        self.acceptableStatusCodes = acceptableStatusCodes
        self.acceptableContentTypes = acceptableContentTypes
    }

    /// Validates and decodes the body.
    /// - Throws: ``CourierError`` `unacceptableStatusCode`, `unacceptableContentType`, or
    ///   `stringDecodingFailed` naming the encoding tried.
    public func serialize(request: Request, response: ResponseHead, data: Data) throws -> String {
        try validate(request: request, response: response, data: data)
        if data.isEmpty { return "" }
        let chosen = encoding ?? response.charset.flatMap(String.Encoding.init(ianaCharsetName:)) ?? fallbackEncoding
        guard let text = String(data: data, encoding: chosen) else {
            throw CourierError.response(
                .stringDecodingFailed,
                "The body of \(response.statusCode) from \(response.url.absoluteString) is not valid \(chosen) text",
                offendingInput: response.charset,
                response: response, data: data
            )
        }
        return text
    }
}

extension ResponseHead {
    /// The `charset` parameter of `Content-Type`, lower-cased and unquoted (`utf-8`); nil when absent.
    public var charset: String? {
        // The shared RFC 9110 §8.3.1 parser: quoted strings may hold `;` and `=`, and quoted pairs are unescaped.
        value(forHTTPHeaderField: "Content-Type").flatMap(MediaType.init)?.charset
    }
}

extension String.Encoding {
    /// The encoding for an IANA charset name (case-insensitive), for the charsets Foundation
    /// can decode on every platform; nil for others.
    public init?(ianaCharsetName name: String) {
        switch name.lowercased() {
        case "utf-8", "utf8": self = .utf8
        case "us-ascii", "ascii": self = .ascii
        case "iso-8859-1", "iso8859-1", "latin1", "l1": self = .isoLatin1
        case "iso-8859-2", "latin2": self = .isoLatin2
        case "windows-1250", "cp1250": self = .windowsCP1250
        case "windows-1251", "cp1251": self = .windowsCP1251
        case "windows-1252", "cp1252": self = .windowsCP1252
        case "windows-1253", "cp1253": self = .windowsCP1253
        case "windows-1254", "cp1254": self = .windowsCP1254
        case "utf-16": self = .utf16
        case "utf-16be": self = .utf16BigEndian
        case "utf-16le": self = .utf16LittleEndian
        case "utf-32": self = .utf32
        case "utf-32be": self = .utf32BigEndian
        case "utf-32le": self = .utf32LittleEndian
        case "shift_jis", "shift-jis", "sjis": self = .shiftJIS
        case "euc-jp": self = .japaneseEUC
        case "iso-2022-jp": self = .iso2022JP
        case "macintosh", "x-mac-roman": self = .macOSRoman
        default: return nil
        }
    }
}
