import CourierTestServer
import Foundation

extension TestServer {
    /// Reads the stats until `condition` holds or `bound` has passed, and returns the last read.
    ///
    /// For figures the server learns some time after the client acts, such as a close reaching
    /// ``TestServerStats/connectionsOpen``. The bound only keeps a wrong figure from hanging the
    /// run: the caller asserts on the returned stats, never on how long they took.
    func stats(
        when condition: (TestServerStats) -> Bool, within bound: Duration = .seconds(30)
    ) async throws -> TestServerStats {
        let clock = ContinuousClock()
        let deadline = clock.now + bound
        var current = stats
        while !condition(current) && clock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
            current = stats
        }
        return current
    }
}
