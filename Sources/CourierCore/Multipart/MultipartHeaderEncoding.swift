import NIOCore

/// How a part's file name is written into its `Content-Disposition` header.
public enum MultipartFileNameEncoding: Sendable, Hashable {
    /// `filename="…"` with the name in UTF-8 and `"`, CR and LF escaped as browsers do
    /// (WHATWG HTML, "multipart/form-data encoding algorithm"). What servers expect.
    case quoted
    /// `filename="…"` as ``quoted`` followed by `filename*=UTF-8''…` (RFC 5987 / RFC 6266 §4.3),
    /// for servers that prefer the extended parameter for non-ASCII names.
    case quotedWithExtendedParameter
}

/// Writes part headers straight into a byte buffer, escaping as it goes.
///
/// No intermediate strings: a form of many small fields is built by appending to one buffer.
enum MultipartHeaderEncoding {
    /// Writes `text` as UTF-8 with `"` → `%22`, CR → `%0D`, LF → `%0A` (WHATWG), so that a name
    /// or file name can neither end its quoted string early nor start a new header line.
    static func writeEscaped(_ text: String, into buffer: inout ByteBuffer) {
        var text = text
        text.withUTF8 { bytes in
            // Fast path: most names have nothing to escape and go out in one copy.
            guard bytes.contains(where: { $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }) else {
                buffer.writeBytes(UnsafeRawBufferPointer(bytes))
                return
            }
            for byte in bytes {
                switch byte {
                case 0x22: buffer.writeStaticString("%22")
                case 0x0D: buffer.writeStaticString("%0D")
                case 0x0A: buffer.writeStaticString("%0A")
                default: buffer.writeInteger(byte)
                }
            }
        }
    }

    /// The escaped form of `text`, as ``writeEscaped(_:into:)`` writes it.
    static func escaped(_ text: String) -> String {
        var buffer = ByteBuffer()
        writeEscaped(text, into: &buffer)
        return String(buffer: buffer)
    }

    /// Writes `text` percent-encoded as an RFC 5987 `value-chars`: every byte outside `attr-char`.
    static func writeExtendedValue(_ text: String, into buffer: inout ByteBuffer) {
        let hexDigits: StaticString = "0123456789ABCDEF"
        for byte in text.utf8 {
            if HeaderByte.isAttributeCharacter(byte) {
                buffer.writeInteger(byte)
            } else {
                hexDigits.withUTF8Buffer { hex in
                    buffer.writeInteger(UInt8(ascii: "%"))
                    buffer.writeInteger(hex[Int(byte >> 4)])
                    buffer.writeInteger(hex[Int(byte & 0x0F)])
                }
            }
        }
    }

    /// Writes a part's header block in the fixed order Content-Disposition, Content-Type, then
    /// `extraHeaders` in the order given, and the blank line that ends it.
    ///
    /// `name == nil` writes no Content-Disposition (a raw-headers part supplies its own).
    static func writeHeaders(
        name: String?, fileName: String?, mimeType: String?, extraHeaders: [(String, String)],
        fileNameEncoding: MultipartFileNameEncoding, into buffer: inout ByteBuffer
    ) {
        if let name {
            buffer.writeStaticString("Content-Disposition: form-data; name=\"")
            writeEscaped(name, into: &buffer)
            buffer.writeStaticString("\"")
            if let fileName {
                buffer.writeStaticString("; filename=\"")
                writeEscaped(fileName, into: &buffer)
                buffer.writeStaticString("\"")
                if fileNameEncoding == .quotedWithExtendedParameter {
                    buffer.writeStaticString("; filename*=UTF-8''")
                    writeExtendedValue(fileName, into: &buffer)
                }
            }
            buffer.writeStaticString("\r\n")
        }
        if let mimeType {
            buffer.writeStaticString("Content-Type: ")
            buffer.writeString(mimeType)
            buffer.writeStaticString("\r\n")
        }
        for (headerName, value) in extraHeaders {
            buffer.writeString(headerName)
            buffer.writeStaticString(": ")
            buffer.writeString(value)
            buffer.writeStaticString("\r\n")
        }
        buffer.writeStaticString("\r\n")
    }
}
