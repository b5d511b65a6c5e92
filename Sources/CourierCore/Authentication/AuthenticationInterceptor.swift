import NIOConcurrencyHelpers

/// Applies an ``Authenticator``'s credential to every request and refreshes it once for all
/// the requests that need it, as Alamofire's `AuthenticationInterceptor`.
///
/// - Before each attempt it applies the current credential, refreshing it first when it
///   ``AuthenticationCredential/requiresRefresh``.
/// - When responses say the credential was refused (``Authenticator/didRequest(_:with:failDueToAuthenticationError:)``),
///   exactly one refresh runs however many requests meet the refusal; the others wait for it
///   and are sent again with the new credential. A refused request that carried an older
///   credential than the current one is sent again without a refresh.
/// - A failed refresh fails every request that waited for it with `.authenticationRefreshFailed`
///   (the authenticator's error inside); more refreshes than ``RefreshWindow`` allows fail with
///   `.authenticationRefreshLoop`. The task fails with that error itself: the session passes a
///   ``CourierError`` from an adapter through unwrapped.
///
/// Only requests whose body is replayable are sent again: the session never asks a retrier
/// about a one-shot body, so a refused one-shot request is delivered with its 401 as it is.
public final class AuthenticationInterceptor<AuthenticatorType: Authenticator>: RequestInterceptor {
    /// The authenticator's credential type.
    public typealias Credential = AuthenticatorType.Credential

    /// The caller's authenticator.
    public let authenticator: AuthenticatorType
    /// The refresh budget (see ``RefreshWindow``).
    public let refreshWindow: RefreshWindow

    private let state: NIOLockedValueBox<RefreshState<Credential>>

    /// Makes an interceptor over `authenticator`, starting from `credential` (nil until the
    /// caller sets one: requests then fail with `.authenticationCredentialMissing`).
    public init(
        authenticator: AuthenticatorType, credential: Credential? = nil, refreshWindow: RefreshWindow = RefreshWindow()
    ) {
        self.authenticator = authenticator
        self.refreshWindow = refreshWindow
        state = NIOLockedValueBox(RefreshState(credential: credential))
    }

    /// The credential applied to requests now. Setting one (after a sign-in, say) replaces it
    /// and forgets a failed refresh of the previous one.
    public var credential: Credential? {
        get { state.withLockedValue { $0.credential } }
        set { state.withLockedValue { $0.replaceCredential(newValue) } }
    }

    /// Applies the current credential, refreshed first when it requires it.
    /// - Throws: ``CourierError`` `.authenticationCredentialMissing`, `.authenticationRefreshFailed`
    ///   or `.authenticationRefreshLoop`; the authenticator's `apply` error; `CancellationError`.
    public func adapt(_ request: Request) async throws -> Request {
        let now = ContinuousClock.now
        let (current, generation, failure) = state.withLockedValue {
            ($0.credential, $0.generation, $0.rememberedFailure(at: now, window: refreshWindow))
        }
        guard var credential = current else {
            throw CourierError(
                .authenticationCredentialMissing, "no credential to authenticate \(request.url.absoluteString) with",
                offendingInput: request.url.absoluteString)
        }
        // A request sent again after the refresh of its credential failed fails with that error.
        if let failure, authenticator.isRequest(request, authenticatedWith: credential) { throw failure }
        if credential.requiresRefresh {
            credential = try await credentialReplacing(generation: generation)
        }
        var adapted = request
        try authenticator.apply(credential, to: &adapted)
        return adapted
    }

    /// Retries a request whose credential was refused: at once when it carried an older
    /// credential, else after the one refresh (joined if already running). Anything else is
    /// not retried.
    public func retry(_ request: Request, response: ResponseHead?, error: CourierError?, retryCount: Int) async
        -> RetryDecision
    {
        guard let response, authenticator.didRequest(request, with: response, failDueToAuthenticationError: error)
        else { return .doNotRetry }
        let (current, generation) = state.withLockedValue { ($0.credential, $0.generation) }
        guard let current else { return .doNotRetry }
        guard authenticator.isRequest(request, authenticatedWith: current) else { return .retry }
        do {
            _ = try await credentialReplacing(generation: generation)
        } catch is CancellationError {
            return .doNotRetry
        } catch {
            // The failure is remembered: adapting the retry throws it, so the task fails with it.
        }
        return .retry
    }

    /// The credential that replaces the one of `generation`: the current one when it was
    /// replaced already, else the result of the one refresh (started here or joined).
    private func credentialReplacing(generation: Int) async throws -> Credential {
        let waiter = state.withLockedValue { $0.makeWaiterID() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Credential, any Error>) in
                let now = ContinuousClock.now
                let step = state.withLockedValue {
                    $0.join(
                        waiter, continuation, replacing: generation, at: now, window: refreshWindow,
                        isCancelled: Task.isCancelled)
                }
                switch step {
                case .resume(let result): continuation.resume(with: result)
                case .wait: break
                case .refresh(let old): Task { await runRefresh(of: old) }
                }
            }
        } onCancel: {
            state.withLockedValue { $0.removeWaiter(waiter) }?.resume(throwing: CancellationError())
        }
    }

    /// Runs the one refresh and hands its outcome to every waiter.
    private func runRefresh(of old: Credential) async {
        let result: Result<Credential, CourierError>
        do {
            result = .success(try await authenticator.refresh(old))
        } catch {
            result = .failure(
                CourierError(
                    .authenticationRefreshFailed, "refreshing the credential failed: \(error)", underlyingError: error))
        }
        let now = ContinuousClock.now
        let waiters = state.withLockedValue { $0.finishRefresh(result, at: now) }
        for waiter in waiters { waiter.resume(with: result.mapError { $0 as any Error }) }
    }
}
