import Foundation

/// The outcome of a completed task: the request as last sent, the final response, and the body.
public struct SessionResponse: Sendable {
    /// The request as it was last sent (after redirects, adapters and resume headers).
    public var request: Request
    /// The final response's head (a redirect's own head when a hook stopped the redirect).
    public var response: ResponseHead
    /// The body bytes for data and upload tasks; empty for downloads.
    public var data: Data
    /// Where a download (or a data task turned into one) was moved; nil otherwise.
    public var fileURL: URL?

    /// Makes a response value.
    public init(request: Request, response: ResponseHead, data: Data = Data(), fileURL: URL? = nil) {
        self.request = request
        self.response = response
        self.data = data
        self.fileURL = fileURL
    }
}

extension CourierError.Code {
    /// A buffered response grew past the session's cap; download tasks stream to disk instead.
    public static let responseTooLarge = CourierError.Code("responseTooLarge")
    /// A file operation of a download failed (temporary file, moving into place).
    public static let downloadFailed = CourierError.Code("downloadFailed")
    /// A download's destination already exists and `removePreviousFile` was not given.
    public static let downloadDestinationExists = CourierError.Code("downloadDestinationExists")
    /// Resume data that cannot be decoded, or that does not match the server's answer.
    public static let invalidResumeData = CourierError.Code("invalidResumeData")
    /// A request adapter failed; the underlying error is the adapter's.
    public static let requestAdaptationFailed = CourierError.Code("requestAdaptationFailed")
}
