import Courier
import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import CourierCore

/// The kinds of request body that decide what a redirect or a retry may do.
enum AttemptBodyKind: String, CaseIterable, CustomStringConvertible {
    case none, replayable, oneShot
    var description: String { rawValue }

    var body: RequestBody {
        switch self {
        case .none: return .empty
        case .replayable: return .data(Data("body".utf8))
        case .oneShot: return .oneShotStream(length: 4, SingleChunk(buffer: ByteBuffer(string: "once")))
        }
    }
}

private let origin = URL(string: "http://127.0.0.1:8080/start")!

private func request(_ method: HTTPMethod, _ kind: AttemptBodyKind) -> Request {
    var request = Request(method: method, url: origin)
    request.body = kind.body
    request.headerFields[.authorization] = "Bearer secret"
    if kind != .none { request.headerFields[.contentType] = "text/plain" }
    return request
}

private func head(_ status: Int, location: String? = nil) -> ResponseHead {
    var fields = HTTPFields()
    if let location { fields[.location] = location }
    return ResponseHead(status: .init(code: status), headerFields: fields, url: origin)
}

private let follows = FollowUpSettings(redirectPolicy: RedirectPolicy(), hasRetrier: false, canProvideNewBody: false)

@Suite("Attempt decisions: redirects, retries and resume as pure functions")
struct AttemptPolicyTests {
    static let methods: [HTTPMethod] = [.get, .head, .post, .put, .delete]

    /// RFC 9110 §15.4 as browsers apply it, restated independently of `RedirectPolicy`.
    @Test(arguments: [301, 302, 303, 307, 308], AttemptBodyKind.allCases)
    func redirects(status: Int, body: AttemptBodyKind) {
        for method in Self.methods {
            let sent = request(method, body)
            let step = AttemptPolicy.afterResponse(
                head(status, location: "/next"), sent: sent, history: AttemptHistory(request: sent), settings: follows)
            let becomesGet = (status == 303 && method != .head) || ((status == 301 || status == 302) && method == .post)
            // A HEAD keeps its method on a 303, and so whatever body it had.
            let dropsBody = becomesGet
            let label = "\(status) \(method) \(body)"
            if !dropsBody && body == .oneShot {
                guard case .fail(let error) = step else { Issue.record("\(label): \(step)"); continue }
                #expect(error.code == .bodyNotReplayable, "\(label)")
                continue
            }
            guard case .redirect(let next) = step else { Issue.record("\(label): \(step)"); continue }
            #expect(next.url.absoluteString == "http://127.0.0.1:8080/next", "\(label)")
            #expect(next.method == (becomesGet ? .get : method), "\(label)")
            #expect(next.body.isEmpty == (dropsBody || body == .none), "\(label)")
            #expect((next.headerFields[.contentType] == nil) == (dropsBody || body == .none), "\(label)")
            #expect(next.headerFields[.authorization] == "Bearer secret", "same origin keeps credentials: \(label)")
        }
    }

    @Test(arguments: [307, 308])
    func aHookThatCanSupplyABodyLetsAOneShotBodyBeRedirected(status: Int) {
        let sent = request(.post, .oneShot)
        var rules = follows
        rules.canProvideNewBody = true
        let step = AttemptPolicy.afterResponse(
            head(status, location: "/again"), sent: sent, history: AttemptHistory(request: sent), settings: rules)
        guard case .redirect(let next) = step else { Issue.record("\(step)"); return }
        #expect(next.method == .post)
        #expect(!next.body.isEmpty)
    }

    @Test(arguments: [200, 204, 300, 304, 301, 307, 404, 503])
    func responsesThatAreNotFollowedAreDelivered(status: Int) {
        // Redirect statuses without a Location are delivered as they are.
        let sent = request(.get, .none)
        let step = AttemptPolicy.afterResponse(
            head(status), sent: sent, history: AttemptHistory(request: sent), settings: follows)
        guard case .deliver = step else { Issue.record("\(status): \(step)"); return }
    }

    @Test func redirectLimitsAndOrigins() {
        let sent = request(.get, .none)
        var state = AttemptHistory(request: sent)
        for _ in 0..<16 { state.redirected(to: sent) }
        #expect(state.redirectCount == 16)
        let tooMany = AttemptPolicy.afterResponse(
            head(302, location: "/n"), sent: sent, history: state, settings: follows)
        guard case .fail(let error) = tooMany else { Issue.record("\(tooMany)"); return }
        #expect(error.code == .tooManyRedirects)

        let elsewhere = AttemptPolicy.afterResponse(
            head(302, location: "http://[::1]:9/x"), sent: sent, history: AttemptHistory(request: sent),
            settings: follows)
        guard case .redirect(let next) = elsewhere else { Issue.record("\(elsewhere)"); return }
        #expect(next.headerFields[.authorization] == nil)

        let notHTTP = AttemptPolicy.afterResponse(
            head(302, location: "ftp://127.0.0.1/x"), sent: sent, history: AttemptHistory(request: sent),
            settings: follows)
        guard case .fail(let invalid) = notHTTP else { Issue.record("\(notHTTP)"); return }
        #expect(invalid.code == .invalidRedirectLocation)
    }

    /// The retrier is asked only when it could act: installed, the body producible again, and an
    /// error status (or a transport failure that is not a cancel); the run checks the task is not
    /// stopping before it asks.
    @Test(arguments: [200, 302, 404, 503], AttemptBodyKind.allCases)
    func retriesOnAStatus(status: Int, body: AttemptBodyKind) {
        let sent = request(.put, body)
        for hasRetrier in [false, true] {
            let rules = FollowUpSettings(
                redirectPolicy: RedirectPolicy(), hasRetrier: hasRetrier, canProvideNewBody: false)
            let step = AttemptPolicy.afterDeclinedRedirect(head(status), sent: sent, settings: rules)
            let asks = status >= 400 && hasRetrier && body != .oneShot
            let label = "\(status) \(body) retrier \(hasRetrier)"
            switch step {
            case .consultRetrier: #expect(asks, "\(label)")
            case .deliver: #expect(!asks, "\(label)")
            default: Issue.record("\(label): \(step)")
            }
        }
    }

    @Test(arguments: [CourierError.Code.connectionFailed, .timedOut, .cancelled], AttemptBodyKind.allCases)
    func retriesAfterAFailure(code: CourierError.Code, body: AttemptBodyKind) {
        let sent = request(.get, body)
        let rules = FollowUpSettings(redirectPolicy: RedirectPolicy(), hasRetrier: true, canProvideNewBody: false)
        let step = AttemptPolicy.afterFailure(CourierError(code, "x"), sent: sent, settings: rules)
        let asks = code != .cancelled && body != .oneShot
        switch step {
        case .consultRetrier: #expect(asks)
        case .fail(let error): #expect(!asks); #expect(error.code == code)
        default: Issue.record("\(step)")
        }
        let unasked = AttemptPolicy.afterFailure(
            CourierError(code, "x"), sent: sent, settings: follows)
        guard case .fail = unasked else { Issue.record("no retrier, still asked: \(unasked)"); return }
    }

    @Test func retryAnswersBecomeDelays() {
        #expect(AttemptPolicy.retryDelay(.doNotRetry) == nil)
        #expect(AttemptPolicy.retryDelay(.retry) == .zero)
        #expect(AttemptPolicy.retryDelay(.retryWithDelay(.milliseconds(250))) == .milliseconds(250))
        #expect(AttemptPolicy.retryDelay(.retryWithDelay(.seconds(-1))) == .zero)
    }

    @Test func attemptCountsAndAdapting() {
        var state = AttemptHistory(request: request(.get, .none))
        #expect(state.needsAdapting && state.sendsOriginal)
        state.adapted(to: request(.get, .none))
        #expect(!state.needsAdapting && !state.sendsOriginal)
        state.retrying()
        #expect(state.needsAdapting && state.retryCount == 1)
        state.redirected(to: request(.get, .none))
        // A redirect hop is not adapted again; a retry is.
        #expect(!state.needsAdapting && state.redirectCount == 1)
    }

    @Test func resumeHeadersGoToTheResumedURLOnly() throws {
        let partial = URL(fileURLWithPath: "/tmp/partial")
        let resume = ResumeData(
            url: origin, bytesWritten: 1000, entityTag: "\"v1\"", lastModified: nil, partialFileURL: partial)
        let plain = Request(url: origin)
        let resumed = try AttemptPolicy.outgoing(plain, resuming: resume)
        #expect(resumed.headerFields[.range] == "bytes=1000-")
        #expect(resumed.headerFields[.ifRange] == "\"v1\"")
        // Bytes as sent without a coding, as the partial file holds; a caller's own choice stays.
        #expect(resumed.headerFields[.acceptEncoding] == "identity")
        var asking = plain
        asking.headerFields[.acceptEncoding] = "gzip"
        #expect(try AttemptPolicy.outgoing(asking, resuming: resume).headerFields[.acceptEncoding] == "gzip")
        let elsewhere = try AttemptPolicy.outgoing(
            Request(url: URL(string: "http://127.0.0.1:8080/other")!), resuming: resume)
        #expect(elsewhere.headerFields[.range] == nil)
        #expect(try AttemptPolicy.outgoing(plain, resuming: nil).headerFields[.range] == nil)

        let redirected = AttemptPolicy.redirectTarget(resumed, resuming: true)
        #expect(redirected.headerFields[.range] == nil && redirected.headerFields[.ifRange] == nil)
        #expect(AttemptPolicy.redirectTarget(resumed, resuming: false).headerFields[.range] == "bytes=1000-")

        let noValidator = ResumeData(
            url: origin, bytesWritten: 1, entityTag: nil, lastModified: nil, partialFileURL: partial)
        #expect(throws: CourierError.self) { try AttemptPolicy.outgoing(plain, resuming: noValidator) }
    }
}
