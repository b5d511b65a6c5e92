import Foundation
import HTTPTypes

/// What a task does after one attempt (one exchange with the server), as ``AttemptPolicy`` decides.
enum NextStep: Sendable {
    /// Follow a redirect: send this request next, once the redirect hooks agree.
    case redirect(Request)
    /// Ask the retrier (the caller's code) whether to send the request again; if it says no,
    /// deliver the response, or fail with the attempt's error.
    case consultRetrier
    /// Read the body and deliver the response.
    case deliver
    /// Fail the task with this error.
    case fail(CourierError)
}

/// The settings that the decisions between attempts read: how redirects are followed, and
/// whether a retry is possible at all; fixed for a task.
struct FollowUpSettings: Sendable {
    var redirectPolicy: RedirectPolicy
    /// A retrier is installed (the manager's interceptor).
    var hasRetrier: Bool
    /// A need-new-body-stream hook can supply a body that cannot be replayed.
    var canProvideNewBody: Bool
}

/// What a task's attempts did so far, kept by its run: the request the next attempt starts from
/// (before adapting), the redirect and retry counts, and the resume data a stopped download left.
struct AttemptHistory: Sendable {
    /// The request the next attempt starts from (the original, a redirect's target).
    var request: Request
    var redirectCount = 0
    var retryCount = 0
    /// The adapter runs before the first attempt and before each retry, not before a redirect hop.
    var needsAdapting = true
    /// What goes out is still the original request, so the task need not store it again.
    var sendsOriginal = true
    /// What a download that stopped left to continue from.
    var resumeData: ResumeData?
    /// Resends of exchanges that got no answer (``UnansweredExchange``), decided without the retrier.
    var resends = ResendBudget()

    mutating func adapted(to request: Request) {
        self.request = request
        needsAdapting = false
        sendsOriginal = false
    }

    mutating func redirected(to next: Request) {
        request = next
        redirectCount += 1
        needsAdapting = false
        sendsOriginal = false
    }

    mutating func retrying() {
        retryCount += 1
        needsAdapting = true
    }
}

/// The decisions between attempts (follow, ask the retrier, deliver, fail), as pure functions of
/// the attempt and its response: the run (`SessionTask+Run.swift`) does the I/O and asks these
/// what comes next.
enum AttemptPolicy {
    /// After the transport failed: ask the retrier when one could resend this request (not after
    /// a cancel), else fail.
    static func afterFailure(_ error: CourierError, sent: Request, settings: FollowUpSettings) -> NextStep {
        error.code != .cancelled && mayRetry(sent, settings: settings) ? .consultRetrier : .fail(error)
    }

    /// After a response head: follow a redirect the policy accepts, ask the retrier about an
    /// error status, else deliver.
    static func afterResponse(_ head: ResponseHead, sent: Request, history: AttemptHistory, settings: FollowUpSettings)
        -> NextStep
    {
        do {
            let decision = try settings.redirectPolicy.decide(
                request: sent, response: head, redirectCount: history.redirectCount,
                canProvideNewBody: settings.canProvideNewBody)
            if case .follow(let next) = decision { return .redirect(next) }
        } catch {
            return .fail(error as? CourierError ?? CourierError(.transportFailed, "\(error)"))
        }
        return afterDeclinedRedirect(head, sent: sent, settings: settings)
    }

    /// A response that is not followed (no redirect, or a hook declined it): ask the retrier
    /// about an error status, else deliver.
    static func afterDeclinedRedirect(_ head: ResponseHead, sent: Request, settings: FollowUpSettings) -> NextStep {
        head.statusCode >= 400 && mayRetry(sent, settings: settings) ? .consultRetrier : .deliver
    }

    /// The wait before sending `sent` again on its own after `error`, or nil when its transport
    /// did not report it unanswered (``CourierError/unansweredExchange``), the method or body
    /// rules it out, or the bound is reached. The session alone resends; transports never do.
    static func resendPause(after error: CourierError, sent: Request, history: inout AttemptHistory) -> Duration? {
        guard let reason = error.unansweredExchange, reason.allowsResend(of: sent.method), sent.body.isReplayable
        else { return nil }
        return history.resends.spend(on: reason)
    }

    /// The wait before sending again, or nil when the retrier declined.
    static func retryDelay(_ decision: RetryDecision) -> Duration? {
        switch decision {
        case .doNotRetry: return nil
        case .retry: return .zero
        case .retryWithDelay(let delay): return max(.zero, delay)
        }
    }

    /// A retrier is asked only when it could act: one is installed and the body can be produced
    /// again. Whether the task is stopping is the run's to check, once, before it asks.
    private static func mayRetry(_ request: Request, settings: FollowUpSettings) -> Bool {
        settings.hasRetrier && request.body.isReplayable
    }

    /// The request that goes out for an attempt: `Range` and `If-Range` added when it resumes a
    /// download at the URL the resume data names (``ResumeData/continues(_:)``: a record's URL,
    /// which keeps no query, by scheme, host, port and path; a redirect hop elsewhere gets neither), with
    /// `Accept-Encoding: identity` unless the request names codings itself: the partial file holds
    /// bytes as sent without a coding, and a range of a coded representation counts other bytes.
    /// - Throws: ``CourierError`` `.invalidResumeData` when the resume data has no validator.
    static func outgoing(_ request: Request, resuming resumeData: ResumeData?) throws -> Request {
        guard let resumeData, resumeData.continues(request.url) else { return request }
        guard resumeData.missingRanges == nil else {
            throw CourierError(
                .invalidResumeData,
                "the resume data for \(resumeData.url.absoluteString) is a split download's; continue it with download(_:to:connections:partialFile:options:progress:)",
                offendingInput: resumeData.url.absoluteString)
        }
        guard let validator = resumeData.ifRangeValidator else {
            throw CourierError(
                .invalidResumeData, "the resume data for \(resumeData.url.absoluteString) has no ETag or Last-Modified",
                offendingInput: resumeData.url.absoluteString)
        }
        var outgoing = request
        outgoing.headerFields[.range] = "bytes=\(resumeData.bytesWritten)-"
        outgoing.headerFields[.ifRange] = validator
        if outgoing.headerFields[.acceptEncoding] == nil { outgoing.headerFields[.acceptEncoding] = "identity" }
        return outgoing
    }

    /// The redirect's next request as the hooks left it, without the range headers of a resumed
    /// download (they belong to the resumed URL only).
    static func redirectTarget(_ next: Request, resuming: Bool) -> Request {
        guard resuming else { return next }
        var next = next
        next.headerFields[.range] = nil
        next.headerFields[.ifRange] = nil
        return next
    }
}
