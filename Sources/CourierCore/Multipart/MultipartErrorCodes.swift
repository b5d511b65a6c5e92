/// The codes of the multipart layer: building a form, reading it, writing it to a file.
///
/// A form's reads can also fail with the request layer's `.invalidFile`, `.invalidHeader`,
/// `.bodyNotReplayable` and `.bodyLengthMismatch`.
extension CourierError.Code {
    /// A multipart boundary that RFC 2046 does not allow.
    ///
    /// Thrown by ``MultipartBoundary/init(validating:)``.
    public static let invalidBoundary = CourierError.Code("invalidBoundary")

    /// A declared body or part length that is negative.
    ///
    /// Thrown by `MultipartFormData.append` for a stream part declared with a negative length.
    public static let invalidBodyLength = CourierError.Code("invalidBodyLength")

    /// A caller's stream for a multipart part failed, or could not be made.
    ///
    /// Thrown while a form is read (``MultipartBodyReader``, `makeChunks()`), with the stream's
    /// own error as the ``CourierError/underlyingError``.
    public static let streamReadFailed = CourierError.Code("streamReadFailed")

    /// A form with an `AsyncSequence` part was read synchronously (``MultipartFormData/encode()``,
    /// ``MultipartFormData/write(to:)``, ``MultipartBodyReader``); use `makeChunks()` instead.
    public static let asyncPartNeedsAsyncRead = CourierError.Code("asyncPartNeedsAsyncRead")

    /// An output file that already exists (Courier never writes over one).
    ///
    /// Thrown by ``MultipartFormData/write(to:)`` and the serializer's
    /// `request(multipartFormRequest:writingStreamContentsTo:)`.
    public static let outputFileExists = CourierError.Code("outputFileExists")

    /// An output file that could not be created or written.
    ///
    /// Thrown by ``MultipartFormData/write(to:)`` (the partial file is removed).
    public static let fileWriteFailed = CourierError.Code("fileWriteFailed")
}
