import Foundation
import HTTPTypes

/// How a redirect response turns into the next request (RFC 9110 §15.4), as a pure function.
///
/// - 301 and 302 turn `POST` into `GET` without a body (what browsers and AFNetworking do);
///   other methods keep their method and body.
/// - 303 turns every method but `HEAD` into `GET` without a body.
/// - 307 and 308 keep the method and the body; the body is sent again from a fresh reader, and
///   a body that cannot be replayed is a `.bodyNotReplayable` error, never an empty resend.
/// - `Authorization`, `Proxy-Authorization` and `Cookie` are dropped when the redirect leaves
///   the origin (scheme, host and port).
public struct RedirectPolicy: Sendable, Hashable {
    /// Most redirects followed for one task; one more is a `.tooManyRedirects` error.
    public var maximumRedirects: Int

    /// Makes a policy; 16 by default, which real sites never need to exceed.
    public init(maximumRedirects: Int = 16) {
        self.maximumRedirects = maximumRedirects
    }

    /// What to do with a response.
    public enum Decision: Sendable {
        /// Not a redirect that can be followed (not 301/302/303/307/308, or no `Location`): deliver it.
        case deliver
        /// Send this request next.
        case follow(Request)
    }

    /// Decides what follows `response` to `request`, `redirectCount` redirects into the task.
    ///
    /// `canProvideNewBody` says the caller can supply a new body (a need-new-body-stream hook),
    /// so a one-shot body is no reason to fail.
    /// - Throws: ``CourierError`` `.tooManyRedirects`, `.invalidRedirectLocation` (a `Location`
    ///   that is not a URL, or not http/https), or `.bodyNotReplayable` (307/308 with a one-shot body).
    public func decide(
        request: Request, response: ResponseHead, redirectCount: Int, canProvideNewBody: Bool = false
    ) throws -> Decision {
        let status = response.statusCode
        guard [301, 302, 303, 307, 308].contains(status), let location = response.value(forHTTPHeaderField: "Location")
        else {
            return .deliver
        }
        guard redirectCount < maximumRedirects else {
            throw CourierError(
                .tooManyRedirects,
                "stopped after \(maximumRedirects) redirects; the last one went from \(Self.quoted(request.url.absoluteString)) to \(Self.quoted(location))",
                offendingInput: location, response: response)
        }
        // The shared RFC 3986 resolver: control characters refused, unencoded spaces and
        // non-ASCII bytes encoded, dot segments removed, the request's fragment kept.
        guard let reference = LocationValue(location),
            let resolvedText = reference.resolved(against: request.url.absoluteString),
            let resolved = URL(string: resolvedText),
            let scheme = resolved.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = resolved.host, !host.isEmpty
        else {
            throw CourierError(
                .invalidRedirectLocation,
                "the redirect from \(Self.quoted(request.url.absoluteString)) points to \"\(Self.quoted(location))\", which is not an http or https URL",
                offendingInput: location, response: response)
        }

        var next = request
        next.url = resolved
        let dropsBody: Bool
        switch status {
        case 301, 302: dropsBody = request.method == .post
        case 303: dropsBody = request.method != .head
        default: dropsBody = false
        }
        if dropsBody {
            if request.method != .head { next.method = .get }
            next.body = .empty
            for name in [HTTPField.Name.contentType, .contentLength, .transferEncoding, .contentEncoding] {
                next.headerFields[name] = nil
            }
        } else if !canProvideNewBody && !request.body.isEmpty && !request.body.isReplayable {
            throw CourierError(
                .bodyNotReplayable,
                "the \(status) redirect from \(Self.quoted(request.url.absoluteString)) to \(Self.quoted(resolved.absoluteString)) must resend the body, but it is a one-shot stream",
                offendingInput: location, response: response)
        }
        if !Self.sameOrigin(request.url, resolved) {
            for name in [HTTPField.Name.authorization, .proxyAuthorization, .cookie] {
                next.headerFields[name] = nil
            }
        }
        return .follow(next)
    }

    /// The most characters of a URL an error message quotes: a server's 60 KB `Location` in a
    /// redirect loop made a 120 KB message. The whole value stays in `offendingInput`.
    static let quotedURLLimit = 256

    /// `text` for an error message: control characters escaped, cut at ``quotedURLLimit``
    /// characters with an ellipsis.
    static func quoted(_ text: String) -> String {
        let escaped = HeaderField.escaped(text)
        guard escaped.count > quotedURLLimit else { return escaped }
        return escaped.prefix(quotedURLLimit) + "…"
    }

    /// RFC 6454 origin: scheme, host and port, with default ports filled in.
    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        func origin(_ url: URL) -> (String, String, Int) {
            let scheme = url.scheme?.lowercased() ?? ""
            let port = url.port ?? (scheme == "https" ? 443 : 80)
            return (scheme, url.host?.lowercased() ?? "", port)
        }
        return origin(a) == origin(b)
    }
}
