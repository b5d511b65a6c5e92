import Courier
import Foundation
import Testing

@testable import CourierCore

/// The session alone resends an exchange its transport reports unanswered
/// (``CourierError/unansweredExchange``): by the reason's method rule, with a replayable body,
/// not while stopping, and within the reason's bound.
@Suite("Session: resending exchanges that got no answer")
struct UnansweredResendTests {
    static let url = URL(string: "http://127.0.0.1:1/")!

    static func failure(_ reason: UnansweredExchange?) -> CourierError {
        var error = CourierError(.connectionFailed, "the connection closed")
        error.unansweredExchange = reason
        return error
    }

    /// How many resends `reason` gets for `request` before the session gives up.
    static func resends(_ reason: UnansweredExchange?, of request: Request) -> Int {
        var state = AttemptHistory(request: request)
        var count = 0
        while AttemptPolicy.resendPause(after: failure(reason), sent: request, history: &state) != nil {
            count += 1
            if count > 100 { break }
        }
        return count
    }

    @Test(arguments: [
        (UnansweredExchange.unsent, HTTPMethod.post, UnansweredExchange.maximumUnsentResends),
        (.refused, .post, UnansweredExchange.maximumResends),
        (.cancelled, .get, UnansweredExchange.maximumResends),
        (.cancelled, .post, 0),
        (.connectionClosed, .get, UnansweredExchange.maximumResendsAfterClose),
        (.connectionClosed, .patch, 0),
    ])
    func eachReasonHasItsMethodRuleAndBound(reason: UnansweredExchange, method: HTTPMethod, expected: Int) {
        let request = Request(method: method, url: Self.url, body: .data(Data("x".utf8)))
        #expect(Self.resends(reason, of: request) == expected)
    }

    @Test func nothingIsResentWithoutAReasonOrWithABodyThatCannotBeReplayed() {
        let get = Request(url: Self.url)
        #expect(Self.resends(nil, of: get) == 0)
        let oneShot = Request(
            method: .put, url: Self.url, body: .oneShotStream(length: nil, AsyncStream { $0.finish() }))
        #expect(Self.resends(.unsent, of: oneShot) == 0)
    }

    @Test func theFirstResendGoesAtOnceAndLaterOnesBackOff() {
        var state = AttemptHistory(request: Request(url: Self.url))
        let pauses = (0..<3).compactMap { _ in
            AttemptPolicy.resendPause(after: Self.failure(.refused), sent: Request(url: Self.url), history: &state)
        }
        #expect(pauses == [.zero, .milliseconds(1), .milliseconds(2)])
    }
}
