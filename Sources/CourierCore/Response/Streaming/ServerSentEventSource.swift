import Foundation
import HTTPTypes

extension SessionManager {
    /// Server-sent events from `request` as a browser's `EventSource` receives them (WHATWG HTML
    /// §9.2.3): a sequence that reconnects when the connection drops or the body ends, waits the
    /// reconnection time, and sends `Last-Event-ID`; see ``ServerSentEventSource``.
    public func eventSource(for request: Request, options: ServerSentEventSource.Options = .init())
        -> ServerSentEventSource
    {
        ServerSentEventSource(manager: self, request: request, options: options)
    }
}

extension HTTPSessionManager {
    /// The server-sent events of `GET path`, reconnecting as a browser's `EventSource` does
    /// (``SessionManager/eventSource(for:options:)``). Nothing is sent until the first `next()`.
    /// - Throws: ``CourierError`` `.invalidURL`, `.invalidHeader` or the request serializer's
    ///   error when the request cannot be built; the sequence throws as ``ServerSentEventSource``.
    public func eventSource(
        _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:],
        options: ServerSentEventSource.Options = .init()
    ) throws -> ServerSentEventSource {
        session.eventSource(
            for: try request(.get, path, parameters.map(RequestContent.parameters), headers: headers), options: options)
    }
}

/// The events of an event stream across reconnections, as HTML §9.2.3 "Processing model" has an
/// `EventSource` do it:
///
/// - Each connection is a ``SessionManager/stream(_:overrides:uploadProgress:)`` of the request with `Accept:
///   text/event-stream`, `Cache-Control: no-cache`, and `Last-Event-ID` once an id was received
///   (§9.2.4). Events are parsed by ``ServerSentEventParser``.
/// - A 200 response whose media type is `text/event-stream` is read; when its body ends, or the
///   connection breaks or times out (`.connectionFailed`, `.timedOut`), the source waits the
///   reconnection time (the stream's latest `retry`, else ``Options/reconnectionTime``) and
///   connects again ("reestablish the connection").
/// - A 204 No Content ends the sequence (the server's way to stop a client). Any other status
///   fails it with `.unacceptableStatusCode`, another media type with `.unacceptableContentType`
///   ("fail the connection": no reconnection), and so does any other error.
///
/// Nothing is buffered beyond one chunk of one connection; cancel the reading task to stop.
public struct ServerSentEventSource: AsyncSequence, Sendable {
    public typealias Element = ServerSentEvent

    /// How the source connects and reconnects.
    public struct Options: Sendable {
        /// The wait before a reconnection until the stream sends a `retry` field (HTML leaves the
        /// default to the user agent; browsers use a few seconds). Default 3 s.
        public var reconnectionTime: Duration = .seconds(3)
        /// The most reconnections in a row without an event in between before the source gives up
        /// and throws the last error (or ends, when the last connection ended cleanly); nil never
        /// gives up, as a browser does. Default nil.
        public var maximumReconnectionsWithoutEvent: Int?
        /// The last event ID to resume after on the first connection; "" for none.
        public var lastEventID: String = ""
        /// The cap on one event's bytes (``ServerSentEventParser/maximumEventLength``).
        public var maximumEventLength: Int = ServerSentEventParser.defaultMaximumEventLength
        /// Waits out the reconnection time; tests put a recorder here (as the session's
        /// ``RetrySleeper``). Must throw when the task is cancelled.
        var sleeper: RetrySleeper = { try await Task.sleep(for: $0) }

        /// The defaults.
        public init() {}
    }

    let manager: SessionManager
    let request: Request
    let options: Options

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(manager: manager, request: request, options: options)
    }

    /// Connects on the first `next()`, and again as the standard says.
    public struct AsyncIterator: AsyncIteratorProtocol {
        let manager: SessionManager
        let request: Request
        let options: Options
        var current: ServerSentEventSequence<StreamedResponse.Body>.AsyncIterator?
        var connections = 0
        var reconnectionsWithoutEvent = 0
        var finished = false
        /// The last event ID to send on the next connection (HTML §9.2.4).
        public private(set) var lastEventID: String
        /// The stream's reconnection time in milliseconds, once it sent a valid `retry`.
        public private(set) var reconnectionTime: Int?

        init(manager: SessionManager, request: Request, options: Options) {
            self.manager = manager
            self.request = request
            self.options = options
            self.lastEventID = options.lastEventID
        }

        /// The next event, connecting or reconnecting as needed; nil after a 204.
        /// - Throws: ``CourierError``: `.unacceptableStatusCode`, `.unacceptableContentType`,
        ///   `.cancelled`, or the error that ended the last connection when reconnecting gave up
        ///   or the error is not one a reconnection can help with.
        public mutating func next() async throws -> ServerSentEvent? {
            while !finished {
                guard var iterator = current else {
                    try await connect()
                    continue
                }
                do {
                    let event = try await iterator.next()
                    lastEventID = iterator.lastEventID
                    reconnectionTime = iterator.reconnectionTime ?? reconnectionTime
                    if let event {
                        current = iterator
                        reconnectionsWithoutEvent = 0
                        return event
                    }
                    current = nil  // the body ended: reestablish the connection
                } catch {
                    current = nil
                    try rethrowUnlessReconnectable(error)
                }
            }
            return nil
        }

        private mutating func connect() async throws {
            if connections > 0 {
                if givesUp {
                    finished = true
                    return
                }
                reconnectionsWithoutEvent += 1
                let wait = reconnectionTime.map { Duration.milliseconds($0) } ?? options.reconnectionTime
                do {
                    try await options.sleeper(wait)
                } catch {
                    finished = true
                    throw CourierError(
                        .cancelled, "reconnecting to \(request.url.absoluteString) was cancelled",
                        offendingInput: request.url.absoluteString)
                }
            }
            connections += 1
            var outgoing = request
            outgoing.headerFields[.accept] = "text/event-stream"
            outgoing.headerFields[.cacheControl] = "no-cache"
            if let name = HTTPField.Name("Last-Event-ID") {
                outgoing.headerFields[name] = lastEventID.isEmpty ? nil : lastEventID
            }
            let response: StreamedResponse
            do {
                response = try await manager.stream(outgoing)
            } catch {
                try rethrowUnlessReconnectable(error)
                return
            }
            if response.head.statusCode == 204 {
                finished = true
                return
            }
            do {
                _ = try response.validate(statusCodes: [200], contentTypes: ["text/event-stream"])
            } catch {
                finished = true
                throw error
            }
            current = response.serverSentEvents(
                lastEventID: lastEventID, maximumEventLength: options.maximumEventLength
            )
            .makeAsyncIterator()
        }

        /// Returns for a broken connection or a timeout (the caller reconnects); throws anything
        /// else, and ends the sequence.
        private mutating func rethrowUnlessReconnectable(_ error: any Error) throws {
            let code = (error as? CourierError)?.code
            if !Task.isCancelled, code == .connectionFailed || code == .timedOut, !givesUp { return }
            finished = true
            throw error
        }

        /// True once ``Options/maximumReconnectionsWithoutEvent`` reconnections in a row brought no event.
        private var givesUp: Bool {
            options.maximumReconnectionsWithoutEvent.map { reconnectionsWithoutEvent >= $0 } ?? false
        }
    }
}
