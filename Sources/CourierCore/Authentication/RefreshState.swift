/// The shared state of an ``AuthenticationInterceptor``, kept under its lock: the credential,
/// the refresh in flight and who waits for it, recent refreshes, and the last failure. Only
/// pure bookkeeping here; the interceptor resumes continuations and runs the refresh outside
/// the lock.
struct RefreshState<Credential: AuthenticationCredential>: Sendable {
    typealias Waiter = CheckedContinuation<Credential, any Error>

    /// What a request that needs a new credential does next.
    enum Step {
        /// Resume at once (already replaced, a remembered failure, cancelled).
        case resume(Result<Credential, any Error>)
        /// Wait for the refresh in flight.
        case wait
        /// Start the refresh of this credential (and wait for it).
        case refresh(Credential)
    }

    private(set) var credential: Credential?
    /// Counts credential replacements, so a request can tell whether the one it saw is current.
    private(set) var generation = 0
    private var isRefreshing = false
    private var waiters: [Int: Waiter] = [:]
    private var nextWaiterID = 0
    /// When the recent refreshes started, for loop detection.
    private var refreshTimes: [ContinuousClock.Instant] = []
    /// The last failed refresh (or stopped loop): which credential generation, when, and why.
    private var failure: (generation: Int, instant: ContinuousClock.Instant, error: CourierError)?

    init(credential: Credential?) {
        self.credential = credential
    }

    mutating func replaceCredential(_ new: Credential?) {
        credential = new
        generation += 1
        failure = nil
    }

    mutating func makeWaiterID() -> Int {
        nextWaiterID += 1
        return nextWaiterID
    }

    /// The failure of the current credential's refresh, while the window remembers it.
    func rememberedFailure(
        at now: ContinuousClock.Instant, window: AuthenticationInterceptor<some Authenticator>.RefreshWindow
    )
        -> CourierError?
    {
        guard let failure, failure.generation == generation, now - failure.instant < window.interval else { return nil }
        return failure.error
    }

    /// Decides what a request that needs the credential of `replacing` replaced does.
    mutating func join(
        _ id: Int, _ waiter: Waiter, replacing replaced: Int, at now: ContinuousClock.Instant,
        window: AuthenticationInterceptor<some Authenticator>.RefreshWindow, isCancelled: Bool
    ) -> Step {
        if isCancelled { return .resume(.failure(CancellationError())) }
        guard let credential else {
            return .resume(.failure(CourierError(.authenticationCredentialMissing, "no credential to refresh")))
        }
        if generation != replaced { return .resume(.success(credential)) }
        if let error = rememberedFailure(at: now, window: window) { return .resume(.failure(error)) }
        waiters[id] = waiter
        if isRefreshing { return .wait }
        refreshTimes.removeAll { now - $0 >= window.interval }
        guard refreshTimes.count < window.maximumAttempts else {
            waiters[id] = nil
            let error = CourierError(
                .authenticationRefreshLoop,
                "the credential was refreshed \(refreshTimes.count) times within \(window.interval) and is still refused"
            )
            failure = (generation, now, error)
            return .resume(.failure(error))
        }
        refreshTimes.append(now)
        isRefreshing = true
        return .refresh(credential)
    }

    mutating func removeWaiter(_ id: Int) -> Waiter? {
        waiters.removeValue(forKey: id)
    }

    /// Records the refresh's outcome and hands back everyone who waited for it.
    mutating func finishRefresh(_ result: Result<Credential, CourierError>, at now: ContinuousClock.Instant) -> [Waiter]
    {
        switch result {
        case .success(let new): replaceCredential(new)
        case .failure(let error): failure = (generation, now, error)
        }
        isRefreshing = false
        defer { waiters = [:] }
        return Array(waiters.values)
    }
}
