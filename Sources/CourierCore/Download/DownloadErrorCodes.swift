/// The codes of downloads to a file: the file, its destination, and resuming it.
extension CourierError.Code {
    /// A file operation of a download failed (temporary file, moving into place).
    ///
    /// Thrown by download tasks.
    public static let downloadFailed = CourierError.Code("downloadFailed")

    /// A download's destination already exists and `removePreviousFile` was not given.
    ///
    /// Thrown by download tasks when they move the finished file into place.
    public static let downloadDestinationExists = CourierError.Code("downloadDestinationExists")

    /// Resume data that cannot be decoded, or that does not match the server's answer.
    ///
    /// Thrown by ``ResumeData``'s coding and by a resumed download whose server answers with
    /// another range or no validator.
    public static let invalidResumeData = CourierError.Code("invalidResumeData")
}
