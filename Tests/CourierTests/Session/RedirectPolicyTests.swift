import Courier
import Foundation
import HTTPTypes
import NIOCore
import Testing

@testable import CourierCore

@Suite("RedirectPolicy: RFC 9110 redirect decisions without a network")
struct RedirectPolicyTests {
    let origin = URL(string: "http://127.0.0.1:8080/start?x=1")!

    func request(_ method: HTTPMethod, body: RequestBody = .data(Data("payload".utf8))) -> Request {
        var request = Request(method: method, url: origin, body: body)
        request.headerFields[.contentType] = "text/plain"
        request.headerFields[.authorization] = "Bearer secret"
        request.headerFields[.cookie] = "a=b"
        return request
    }

    func response(_ status: Int, location: String? = "/next") -> ResponseHead {
        var fields = HTTPFields()
        if let location { fields[.location] = location }
        return ResponseHead(status: .init(code: status), headerFields: fields, url: origin)
    }

    func follow(_ request: Request, _ response: ResponseHead, count: Int = 0) throws -> Request {
        guard
            case .follow(let next) = try RedirectPolicy().decide(
                request: request, response: response, redirectCount: count)
        else {
            Issue.record("expected a redirect to be followed")
            return request
        }
        return next
    }

    @Test(arguments: [301, 302])
    func postBecomesGetWithoutBody(status: Int) throws {
        let next = try follow(request(.post), response(status))
        #expect(next.method == .get)
        #expect(next.body.isEmpty)
        #expect(next.headerFields[.contentType] == nil)
        #expect(next.url.absoluteString == "http://127.0.0.1:8080/next")
    }

    @Test(arguments: [301, 302])
    func putKeepsMethodAndBody(status: Int) throws {
        let next = try follow(request(.put), response(status))
        #expect(next.method == .put)
        #expect(next.body.contentLength == 7)
    }

    @Test(arguments: [HTTPMethod.post, .put, .delete, .patch])
    func seeOtherBecomesGet(method: HTTPMethod) throws {
        let next = try follow(request(method), response(303))
        #expect(next.method == .get)
        #expect(next.body.isEmpty)
    }

    @Test func seeOtherKeepsHead() throws {
        let next = try follow(request(.head, body: .empty), response(303))
        #expect(next.method == .head)
    }

    @Test(arguments: [307, 308])
    func temporaryAndPermanentKeepMethodAndBody(status: Int) throws {
        let next = try follow(request(.post), response(status))
        #expect(next.method == .post)
        #expect(next.body.contentLength == 7)
        #expect(next.headerFields[.contentType] == "text/plain")
        #expect(next.headerFields[.authorization] == "Bearer secret")
    }

    @Test(arguments: [307, 308])
    func oneShotBodyIsNotReplayable(status: Int) throws {
        let stream = SingleChunk(buffer: ByteBuffer(string: "once"))
        let oneShot = request(.post, body: .oneShotStream(length: 4, stream))
        expectCode(.bodyNotReplayable) {
            try RedirectPolicy().decide(request: oneShot, response: response(status), redirectCount: 0)
        }
        // A need-new-body-stream hook can supply one.
        let decision = try RedirectPolicy().decide(
            request: oneShot, response: response(status), redirectCount: 0, canProvideNewBody: true)
        guard case .follow = decision else {
            Issue.record("expected follow")
            return
        }
    }

    @Test func oneShotBodyIsFineWhen303DropsIt() throws {
        let oneShot = request(
            .post, body: .oneShotStream(length: 4, SingleChunk(buffer: ByteBuffer(string: "once"))))
        let next = try follow(oneShot, response(303))
        #expect(next.body.isEmpty)
    }

    @Test func leavingTheOriginDropsCredentials() throws {
        let next = try follow(request(.get, body: .empty), response(302, location: "http://localhost:8080/x"))
        #expect(next.headerFields[.authorization] == nil)
        #expect(next.headerFields[.cookie] == nil)
        let samePort = try follow(request(.get, body: .empty), response(302, location: "http://127.0.0.1:8080/y"))
        #expect(samePort.headerFields[.authorization] == "Bearer secret")
        let otherPort = try follow(request(.get, body: .empty), response(302, location: "http://127.0.0.1:9090/y"))
        #expect(otherPort.headerFields[.authorization] == nil)
    }

    @Test func relativeLocationsResolveAgainstTheRequest() throws {
        #expect(
            try follow(request(.get), response(302, location: "other")).url.absoluteString
                == "http://127.0.0.1:8080/other")
        #expect(
            try follow(request(.get), response(302, location: "//127.0.0.1:1/z")).url.absoluteString
                == "http://127.0.0.1:1/z")
    }

    @Test func maximumCountIsEnforced() throws {
        expectCode(.tooManyRedirects) {
            try RedirectPolicy(maximumRedirects: 3).decide(
                request: request(.get), response: response(302), redirectCount: 3)
        }
    }

    /// A huge `Location` (60 KB) is quoted to 256 characters with an ellipsis, once per URL; the
    /// error keeps it whole in `offendingInput`.
    @Test func aHugeLocationIsShortenedInTheMessageOnly() throws {
        let location = "/" + String(repeating: "a", count: 60_000)
        for (count, policy, status) in [(3, RedirectPolicy(maximumRedirects: 3), 302), (0, RedirectPolicy(), 307)] {
            var huge = request(.get, body: .empty)
            huge.url = URL(string: "http://127.0.0.1:8080" + location) ?? origin
            var head = response(status, location: location)
            if count == 0 {
                head = response(status, location: "ftp://x" + location)
            }
            #expect {
                try policy.decide(request: huge, response: head, redirectCount: count)
            } throws: { error in
                guard let error = error as? CourierError else { return false }
                let quoted = String(repeating: "a", count: 200)
                return error.message.count < 700 && error.message.contains(quoted + "…")
                    && error.offendingInput == head.value(forHTTPHeaderField: "Location")
            }
        }
    }

    @Test func badLocationsAreTypedErrors() throws {
        for location in ["ftp://127.0.0.1/x", "http://", "javascript:alert(1)"] {
            expectCode(.invalidRedirectLocation) {
                try RedirectPolicy().decide(
                    request: request(.get), response: response(302, location: location), redirectCount: 0)
            }
        }
    }

    @Test func nonRedirectsAndMissingLocationAreDelivered() throws {
        for head in [response(200), response(304), response(300), response(302, location: nil)] {
            guard case .deliver = try RedirectPolicy().decide(request: request(.get), response: head, redirectCount: 0)
            else {
                Issue.record("expected deliver for \(head.statusCode)")
                continue
            }
        }
    }
}
