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
        var openChannels: [ObjectIdentifier: any Channel] = [:]
        var statusGenerator = SplitMix64(seed: 0x5EED)
        var isShuttingDown = false
    }

    private let guarded = NIOLockedValueBox(Guarded())
    let logRequests: Bool
    let scheme: String

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
