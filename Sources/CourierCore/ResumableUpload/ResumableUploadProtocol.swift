/// Which resumable-upload protocol an upload speaks.
///
/// Both create an upload resource on the server, append to it with `PATCH` from an offset the
/// server confirms, and ask it for that offset with `HEAD` after any failure; they differ in
/// their header fields and media types.
public enum ResumableUploadProtocol: String, Sendable, Hashable, CaseIterable {
    /// tus 1.0 (tus.io): `POST` with `Upload-Length` and `Upload-Metadata` creates the upload,
    /// `PATCH` with `Upload-Offset` and `application/offset+octet-stream` appends, every request
    /// carries `Tus-Resumable: 1.0.0`. What deployed servers speak; the default.
    case tus
    /// The IETF draft "Resumable Uploads for HTTP" (draft-ietf-httpbis-resumable-upload), at
    /// interop version ``ietfInteropVersion``: a careful creation (`Upload-Complete: ?0`,
    /// `Upload-Length`, no content), `PATCH` with `application/partial-upload` and
    /// `Upload-Complete: ?1` on the last append, whose answer is the target resource's.
    case ietf

    /// The draft's interop version sent in `Upload-Draft-Interop-Version` (the draft's changes since -09).
    public static let ietfInteropVersion = 8

    /// The tus protocol version sent in `Tus-Resumable`.
    static let tusVersion = "1.0.0"

    /// The media type of an append's content.
    var appendContentType: String {
        switch self {
        case .tus: return "application/offset+octet-stream"
        case .ietf: return "application/partial-upload"
        }
    }

    /// The header fields every request of the protocol carries.
    var commonHeaders: [String: String] {
        switch self {
        case .tus: return ["Tus-Resumable": Self.tusVersion]
        case .ietf: return ["Upload-Draft-Interop-Version": String(Self.ietfInteropVersion)]
        }
    }
}
