import Courier
import Foundation
import NIOConcurrencyHelpers

/// Issue 44's done criterion, sent the same way to every HTTP/2 peer (the test server, nginx,
/// python-h2): `count` JSON POSTs, `concurrency` at a time, through one session.
enum JSONPostLoad {
    /// Sends the POSTs to `url` and returns one line per POST that failed, did not get a 200
    /// or did not ride HTTP/2 (empty when all succeeded). `accepts` checks an answer's body
    /// against the body sent, for a peer that echoes what it got.
    static func failures(
        posting count: Int = 1_000, concurrency: Int = 16, to url: URL, through manager: SessionManager,
        accepts: @escaping @Sendable (_ sent: Data, _ answer: Data) -> Bool = { _, _ in true }
    ) async -> [String] {
        let failures = NIOLockedValueBox<[String]>([])
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<concurrency {
                group.addTask {
                    for index in stride(from: worker, to: count, by: concurrency) {
                        let body = Data("{\"index\": \(index)}".utf8)
                        var request = Request(method: .post, url: url, body: .data(body))
                        try? request.setValue("application/json", forHTTPHeaderField: "Content-Type")
                        do {
                            let response = try await manager.data(for: request)
                            let head = response.response
                            if head.status.code != 200 || head.httpVersion != HTTPProtocolVersion(major: 2, minor: 0)
                                || !accepts(body, response.data)
                            {
                                failures.withLockedValue {
                                    $0.append("\(index): \(head.status.code) \(String(describing: head.httpVersion))")
                                }
                            }
                        } catch {
                            failures.withLockedValue { $0.append("\(index): \(error)") }
                        }
                    }
                }
            }
        }
        return failures.withLockedValue { $0 }
    }
}
