import AsyncHTTPClient
import CourierCore
import Foundation
import NIOConcurrencyHelpers
import NIOHTTP1

/// The delegate path's last `HTTPClient.Request` without headers or body, kept so that the next
/// exchange with the same URL and method reuses AsyncHTTPClient's parsed form of that URL.
///
/// `HTTPClient.Request(url:method:headers:body:)` takes the URL apart through `URLComponents`
/// (scheme, host, port, percent-encoded path, query) on every call: about 10,000 instructions,
/// 5% of a small keep-alive GET (callgrind; see BENCHMARKS.md). A client mostly sends to the same
/// URL again; a copy of the template with this exchange's headers and body is the request that
/// would have been built, for the price of one URL comparison. The template holds no body, so
/// the cache keeps no upload alive.
final class RequestTemplateCache: Sendable {
    /// A class, so that taking it out of the lock costs one reference count, not a copy of
    /// every field of the request.
    private final class Template: Sendable {
        let request: HTTPClient.Request
        init(_ request: HTTPClient.Request) { self.request = request }
    }

    private let last = NIOLockedValueBox<Template?>(nil)

    /// The request AsyncHTTPClient would build from these arguments.
    /// - Throws: AsyncHTTPClient's error for a URL it cannot send to.
    func request(
        url: URL, method: NIOHTTP1.HTTPMethod, headers: HTTPHeaders, body: HTTPClient.Body?
    ) throws -> HTTPClient.Request {
        var request: HTTPClient.Request
        if let cached = last.withLockedValue({ $0 }), cached.request.method == method, cached.request.url == url {
            request = cached.request
        } else {
            request = try HTTPClient.Request(url: url, method: method)
            let template = Template(request)
            last.withLockedValue { $0 = template }
        }
        request.headers = headers
        request.body = body
        return request
    }
}
