import Courier
import Foundation
import HTTPTypes
import NIOCore
import NIOFoundationCompat

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

// In this product, not in Courier: `URLRequest` lives in FoundationNetworking on Linux, which
// brings libcurl with it, and a program on Courier alone should neither load it nor need it to
// link statically.
extension Request {
    /// Makes a request from a Foundation `URLRequest` whose body, if any, is `httpBody` bytes.
    /// A `URLRequest` always has a timeout (60 s by default), which is kept.
    /// - Throws: ``CourierError`` `.invalidURL` when it has no URL, `.invalidMethod` for a method
    ///   that is not a token, `.invalidHeader` for a bad header, `.unsupportedBody` for an
    ///   `httpBodyStream`, which cannot be replayed.
    public init(_ urlRequest: URLRequest) throws {
        guard let url = urlRequest.url else {
            throw CourierError(.invalidURL, "the URLRequest has no URL", offendingInput: "")
        }
        let method = try HTTPMethod(validating: urlRequest.httpMethod ?? "GET")
        var fields = HTTPFields()
        for (name, value) in (urlRequest.allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }) {
            fields.append(try HeaderField.make(name: name, value: value))
        }
        if urlRequest.httpBodyStream != nil {
            throw CourierError(
                .unsupportedBody,
                "a URLRequest with an httpBodyStream cannot be converted: the stream cannot be replayed",
                offendingInput: url.absoluteString)
        }
        self.init(
            method: method, url: url, headerFields: fields,
            body: urlRequest.httpBody.map { RequestBody.data($0) } ?? .empty,
            timeoutInterval: urlRequest.timeoutInterval,
            httpShouldHandleCookies: urlRequest.httpShouldHandleCookies)
    }

    /// The request as a Foundation `URLRequest`; repeated header fields are joined with `,`.
    /// - Throws: ``CourierError`` `.unsupportedBody` when the body is a file or a stream rather
    ///   than bytes in memory.
    public func urlRequest() throws -> URLRequest {
        var result = URLRequest(url: url)
        result.httpMethod = method.rawValue
        for field in headerFields {
            result.addValue(field.value, forHTTPHeaderField: field.name.rawName)
        }
        if let timeoutInterval { result.timeoutInterval = timeoutInterval }
        result.httpShouldHandleCookies = httpShouldHandleCookies
        guard let bytes = body.bufferedBytes else {
            throw CourierError(
                .unsupportedBody, "only a body of bytes in memory converts to a URLRequest, not a file or stream body",
                offendingInput: url.absoluteString)
        }
        if !body.isEmpty { result.httpBody = Data(bytes.readableBytesView) }
        return result
    }
}
