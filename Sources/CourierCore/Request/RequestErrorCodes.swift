/// The codes of the request layer: building a request (URL, method, headers) and reading its body.
///
/// Callers match these (`error.code == .invalidURL`, `catch CourierError.Code.invalidURL`);
/// only Courier makes them.
extension CourierError.Code {
    /// A string that is not a URL, quoted in the message.
    ///
    /// Thrown by the request serializers (`makeRequest(method:urlString:)`, `request(method:urlString:parameters:)`,
    /// also when adding the query string makes the URL invalid), by `Request.init(_:)` from a
    /// `URLRequest` without a URL (in `CourierURLSession`), and by ``HTTPSessionManager`` for a
    /// path that does not resolve against its base URL.
    public static let invalidURL = CourierError.Code("invalidURL")

    /// A method string that is not an RFC 9110 token.
    ///
    /// Thrown by `HTTPMethod.init(validating:)` and by `Request.init(_:)` from a `URLRequest`.
    public static let invalidMethod = CourierError.Code("invalidMethod")

    /// A header name that is not a token, or a header value with CR, LF or NUL.
    ///
    /// Thrown wherever a header enters Courier: ``Request``'s header setters, a serializer's
    /// default headers when a request is built, `Request.init(_:)` from a `URLRequest`, and a
    /// multipart part's MIME type when the form is read.
    public static let invalidHeader = CourierError.Code("invalidHeader")

    /// A file URL that is not a file URL, or names a missing, unreadable or special file.
    ///
    /// Thrown by ``RequestBody`` file bodies and the readers behind them (when the body is made
    /// and when it is opened or read), by `MultipartFormData.append(fileURL:…)` and
    /// ``MultipartFormData/write(to:)``, by the transport's sendfile body, and by the cookie
    /// jar's cookies.txt reader and writer.
    public static let invalidFile = CourierError.Code("invalidFile")

    /// A one-shot body was asked for its bytes a second time (a redirect or retry needed it).
    ///
    /// Thrown when a one-shot ``RequestBody`` stream or a one-shot multipart stream part is read
    /// again, and by ``RedirectPolicy`` for a 307/308 redirect of such a body.
    public static let bodyNotReplayable = CourierError.Code("bodyNotReplayable")

    /// A body produced fewer or more bytes than it declared, or a file changed size under it.
    ///
    /// Thrown by the body readers (file, stream and multipart), by ``MultipartFormData/encode()``,
    /// and by the transport when AsyncHTTPClient reports a length mismatch.
    public static let bodyLengthMismatch = CourierError.Code("bodyLengthMismatch")

    /// A body that the requested conversion cannot carry (a stream into a `URLRequest`).
    ///
    /// Thrown by the conversions between ``Request`` and Foundation's `URLRequest`, which
    /// `CourierURLSession` adds.
    public static let unsupportedBody = CourierError.Code("unsupportedBody")

    /// A multipart form request with GET or HEAD, which carry no body.
    ///
    /// Thrown by the serializer's `multipartFormRequest(method:urlString:parameters:boundary:constructingBody:)`.
    public static let multipartMethodNotAllowed = CourierError.Code("multipartMethodNotAllowed")

    /// A request whose body was expected to be a multipart form and is not.
    ///
    /// Thrown by the serializer's `request(multipartFormRequest:writingStreamContentsTo:)`.
    public static let notAMultipartBody = CourierError.Code("notAMultipartBody")
}
