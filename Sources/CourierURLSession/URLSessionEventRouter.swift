import Courier
import Foundation
import NIOConcurrencyHelpers

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The delegate of the transport's URLSessions: hands each task's callbacks to its exchange.
///
/// One object for every session of a transport, keyed by task object (task identifiers are
/// per session, and a transport may run several). It also keeps URLSession's own policies out:
/// redirects are never followed (the 3xx response is delivered as the answer), and responses
/// are never cached.
final class URLSessionEventRouter: NSObject, URLSessionDataDelegate, Sendable {
    private let exchanges = NIOLockedValueBox<[ObjectIdentifier: URLSessionExchange]>([:])

    /// Routes `task`'s callbacks to `exchange` until the task completes.
    func register(_ exchange: URLSessionExchange, for task: URLSessionTask) {
        exchanges.withLockedValue { $0[ObjectIdentifier(task)] = exchange }
    }

    /// Stops every exchange not yet completed (the transport is shutting down).
    func stopAll(with error: CourierError) {
        for exchange in exchanges.withLockedValue({ Array($0.values) }) { exchange.stop(with: error) }
    }

    private func exchange(for task: URLSessionTask) -> URLSessionExchange? {
        exchanges.withLockedValue { $0[ObjectIdentifier(task)] }
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping @Sendable (URLSession.ResponseDisposition) -> Void
    ) {
        exchange(for: dataTask)?.didReceive(response: response)
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        exchange(for: dataTask)?.didReceive(data: data)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, didSendBodyData bytesSent: Int64, totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        exchange(for: task)?.didSend(totalBytes: totalBytesSent, expected: totalBytesExpectedToSend)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        // The session above decides about redirects (and resends bodies on 307 and 308, which
        // FoundationNetworking would drop): the 3xx itself is the answer.
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, task: URLSessionTask,
        needNewBodyStream completionHandler: @escaping @Sendable (InputStream?) -> Void
    ) {
        // A body stream is read once; an exchange that needs it again fails, and the session
        // resends from the replayable RequestBody if it may.
        completionHandler(nil)
    }

    func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, willCacheResponse proposedResponse: CachedURLResponse,
        completionHandler: @escaping @Sendable (CachedURLResponse?) -> Void
    ) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let exchange = exchanges.withLockedValue { $0.removeValue(forKey: ObjectIdentifier(task)) }
        exchange?.didComplete(task: task, error: error)
    }
}
