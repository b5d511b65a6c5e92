/// The codes of resumable uploads: answers that do not fit the protocol, uploads the server
/// lost, and the store of unfinished uploads.
extension CourierError.Code {
    /// The server answered a resumable upload's request in a way the protocol does not allow
    /// (a status that ends the upload, a missing or malformed `Location` or `Upload-Offset`, an
    /// offset behind what it confirmed or past the end); the message quotes the answer, and the
    /// error carries the response head and body.
    ///
    /// Thrown by ``HTTPSessionManager/Verb/resumable(_:_:options:progress:isolation:)``.
    public static let resumableUploadRejected = CourierError.Code("resumableUploadRejected")

    /// The server no longer knows the upload (404 or 410: expired, deleted) and the options do
    /// not allow starting it again (``ResumableUploadOptions/restartsLostUploads``).
    ///
    /// Thrown by ``HTTPSessionManager/Verb/resumable(_:_:options:progress:isolation:)``.
    public static let resumableUploadLost = CourierError.Code("resumableUploadLost")

    /// A ``FileResumableUploadStore`` could not read, write or remove an entry; the message
    /// quotes the path.
    public static let resumableUploadStoreFailed = CourierError.Code("resumableUploadStoreFailed")
}
