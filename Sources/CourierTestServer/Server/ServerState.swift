import Foundation
import NIOConcurrencyHelpers
import NIOCore

/// State shared by every connection of one server: statistics, fault counters and the open
/// connections that shutdown must close. Connections run on several event loops, hence the lock.
final class ServerState: Sendable {
    private struct Guarded {
        var stats = TestServerStats()
        var flakyAttempts: [String: Int] = [:]
        var releasedHolds: Set<String> = []
        var longPolls: [String: LongPollGroup] = [:]
        var openChannels: [ObjectIdentifier: any Channel] = [:]
        var statusGenerator = SplitMix64(seed: 0x5EED)
        var isShuttingDown = false
    }

    private let guarded = NIOLockedValueBox(Guarded())
    let logRequests: Bool
    let scheme: String
    /// The uploads of `/files/` (tus and the resumable-upload draft).
    let resumableUploads = ResumableUploadRegistry()

    init(logRequests: Bool, scheme: String) {
        self.logRequests = logRequests
        self.scheme = scheme
    }

    var stats: TestServerStats { guarded.withLockedValue { $0.stats } }

    func resetStats() {
        guarded.withLockedValue { state in
            let open = state.stats.connectionsOpen
            state.stats = TestServerStats()
            state.stats.connectionsOpen = open
        }
    }

    /// Registers a new connection; returns false when the server is shutting down.
    func connectionOpened(_ channel: any Channel) -> Bool {
        guarded.withLockedValue { state in
            guard !state.isShuttingDown else { return false }
            state.stats.connectionsAccepted += 1
            state.stats.connectionsOpen += 1
            state.openChannels[ObjectIdentifier(channel)] = channel
            return true
        }
    }

    func connectionClosed(_ channel: any Channel) {
        guarded.withLockedValue { state in
            if state.openChannels.removeValue(forKey: ObjectIdentifier(channel)) != nil {
                state.stats.connectionsOpen -= 1
            }
        }
    }

    func requestReceived(_ head: RecordedRequestHead) {
        guarded.withLockedValue { state in
            state.stats.requestsReceived += 1
            state.stats.lastRequestHead = head
            if state.stats.recentRequestHeads.count == TestServerStats.recentHeadLimit {
                state.stats.recentRequestHeads.removeFirst()
            }
            state.stats.recentRequestHeads.append(head)
        }
    }

    func requestServed() {
        guarded.withLockedValue { $0.stats.requestsServed += 1 }
    }

    /// Counts one attempt at the flaky resource `id` and returns its 1-based attempt number.
    func nextFlakyAttempt(id: String) -> Int {
        guarded.withLockedValue { state in
            state.flakyAttempts[id, default: 0] += 1
            return state.flakyAttempts[id, default: 1]
        }
    }

    /// Forgets every flaky counter.
    func resetFlakyCounters() {
        guarded.withLockedValue { $0.flakyAttempts.removeAll() }
    }

    /// Lets the body held under `id` (`/fault/hold`) go on.
    func releaseHold(id: String) {
        guarded.withLockedValue { _ = $0.releasedHolds.insert(id) }
    }

    /// Whether `/fault/release` was asked for `id`.
    func isHoldReleased(id: String) -> Bool {
        guarded.withLockedValue { $0.releasedHolds.contains(id) }
    }

    /// Holds one request of the long-poll group `id` (`/long-poll`): the future completes when
    /// `count` requests of the group are held, or `cap` after the group's first one, whichever
    /// comes first; the group then starts again empty.
    func holdLongPoll(id: String, count: Int, cap: TimeAmount, on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        let promise = eventLoop.makePromise(of: Void.self)
        let (released, startsGroup, generation) = guarded.withLockedValue {
            state -> ([EventLoopPromise<Void>], Bool, Int) in
            var group = state.longPolls[id] ?? LongPollGroup()
            let startsGroup = group.waiting.isEmpty
            group.waiting.append(promise)
            state.stats.longPollsHeldPeak = max(state.stats.longPollsHeldPeak, group.waiting.count)
            if group.waiting.count >= count {
                let released = group.waiting
                group.waiting = []
                group.generation += 1
                state.longPolls[id] = group
                return (released, false, group.generation)
            }
            state.longPolls[id] = group
            return ([], startsGroup, group.generation)
        }
        for waiting in released { waiting.succeed() }
        if startsGroup {
            eventLoop.scheduleTask(in: cap) { [self] in releaseLongPolls(id: id, generation: generation) }
        }
        return promise.futureResult
    }

    /// The cap of a long-poll group ran out: answers what it holds, unless that batch is gone.
    private func releaseLongPolls(id: String, generation: Int) {
        let released = guarded.withLockedValue { state -> [EventLoopPromise<Void>] in
            guard var group = state.longPolls[id], group.generation == generation else { return [] }
            let released = group.waiting
            group.waiting = []
            group.generation += 1
            state.longPolls[id] = group
            return released
        }
        for waiting in released { waiting.succeed() }
    }

    /// Draws from the server's own generator, used when `/status` has no `seed`.
    func nextStatusRandom() -> UInt64 {
        guarded.withLockedValue { $0.statusGenerator.next() }
    }

    /// Counts an HTTP/2 event (see the `http2…` fields of ``TestServerStats``).
    func recordHTTP2(_ update: (inout TestServerStats) -> Void) {
        guarded.withLockedValue { update(&$0.stats) }
    }

    /// Marks the server as closing and hands back the connections to close.
    func beginShutdown() -> [any Channel] {
        guarded.withLockedValue { state in
            state.isShuttingDown = true
            return Array(state.openChannels.values)
        }
    }
}

/// The requests of one `/long-poll` group waiting to be answered together; `generation` tells a
/// cap timer of an earlier batch from the current one.
private struct LongPollGroup {
    var waiting: [EventLoopPromise<Void>] = []
    var generation = 0
}
