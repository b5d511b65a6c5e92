import Courier
import Foundation
import HTTPTypes
import Testing

@testable import CourierCore

@Suite("Session core without a network: retry policy, progress, resume data")
struct SessionCoreTests {
    // The task state machine's own tests are in Task/TaskStateMachineTests.swift.

    let get = Request(url: URL(string: "http://127.0.0.1/x")!)

    @Test func retryPolicyDefaultsMatchAlamofire() async {
        let policy = RetryPolicy()
        #expect(policy.retryLimit == 2)
        #expect(policy.delay(forRetryCount: 0) == .milliseconds(500))
        #expect(policy.delay(forRetryCount: 1) == .seconds(1))
        #expect(policy.delay(forRetryCount: 2) == .seconds(2))
        for status in [408, 500, 502, 503, 504] {
            let head = ResponseHead(status: .init(code: status), url: get.url)
            #expect(
                await policy.retry(get, response: head, error: nil, retryCount: 0)
                    == .retryWithDelay(.milliseconds(500)))
            #expect(await policy.retry(get, response: head, error: nil, retryCount: 2) == .doNotRetry)
        }
        for status in [400, 404, 501] {
            let head = ResponseHead(status: .init(code: status), url: get.url)
            #expect(await policy.retry(get, response: head, error: nil, retryCount: 0) == .doNotRetry)
        }
        let refused = CourierError(.connectionFailed, "refused")
        #expect(await policy.retry(get, response: nil, error: refused, retryCount: 1) == .retryWithDelay(.seconds(1)))
        let invalid = CourierError(.invalidHeader, "bad")
        #expect(await policy.retry(get, response: nil, error: invalid, retryCount: 0) == .doNotRetry)
        var post = get
        post.method = .post
        #expect(await policy.retry(post, response: nil, error: refused, retryCount: 0) == .doNotRetry)
    }

    @Test func progressIsMonotoneAndEndsAtTheTotal() {
        var tracker = ProgressTracker()
        #expect(tracker.advance(completed: 10, total: 100)?.completedUnitCount == 10)
        #expect(tracker.advance(completed: 60, total: 100)?.completedUnitCount == 60)
        // A resend after a redirect starts again from zero: nothing is reported until it passes 60.
        #expect(tracker.advance(completed: 5, total: 100) == nil)
        #expect(tracker.advance(completed: 60, total: 100) == nil)
        #expect(
            tracker.advance(completed: 100, total: 100)
                == TransferProgress(completedUnitCount: 100, totalUnitCount: 100))
        #expect(tracker.finish() == nil)

        var unknown = ProgressTracker()
        #expect(unknown.advance(completed: 7, total: nil)?.totalUnitCount == nil)
        #expect(unknown.finish() == TransferProgress(completedUnitCount: 7, totalUnitCount: 7))
        #expect(TransferProgress(completedUnitCount: 1, totalUnitCount: 4).fractionCompleted == 0.25)
    }

    @Test func resumeDataRoundTripsAndChoosesTheValidator() throws {
        let data = ResumeData(
            url: get.url, bytesWritten: 512, entityTag: "\"abc\"", lastModified: "Sun, 22 Nov 2026 04:00:00 GMT",
            partialFileURL: URL(fileURLWithPath: "/tmp/partial"))
        #expect(try ResumeData(data: data.encoded()) == data)
        #expect(data.ifRangeValidator == "\"abc\"")
        var weak = data
        weak.entityTag = "W/\"abc\""
        #expect(weak.ifRangeValidator == "Sun, 22 Nov 2026 04:00:00 GMT")
        expectCode(.invalidResumeData) { try ResumeData(data: Data("nope".utf8)) }
    }

    @Test func resumeContinuationFollowsTheStatusAndRange() throws {
        let data = ResumeData(
            url: get.url, bytesWritten: 512, entityTag: "\"abc\"", lastModified: nil,
            partialFileURL: URL(fileURLWithPath: "/tmp/partial"))
        func head(_ status: Int, _ range: String?) -> ResponseHead {
            var fields = HTTPFields()
            if let range { fields[.contentRange] = range }
            return ResponseHead(status: .init(code: status), headerFields: fields, url: get.url)
        }
        #expect(try data.continuation(for: head(206, "bytes 512-1023/1024")) == .append)
        #expect(try data.continuation(for: head(200, nil)) == .restart)
        expectCode(.invalidResumeData) { try data.continuation(for: head(206, "bytes 0-1023/1024")) }
        expectCode(.invalidResumeData) { try data.continuation(for: head(206, nil)) }
    }
}
