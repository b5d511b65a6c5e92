import Foundation

extension HTTPSessionManager {
    /// The outcome a verb's completion handler receives.
    public typealias Completion = @Sendable (Result<DataResponse<any Sendable>, CourierError>) -> Void

    /// `GET`: `manager.get("users", parameters: ["page": 2], as: [User].self)`; see ``Verb``.
    public var get: Verb { Verb(manager: self, method: .get) }
    /// `HEAD`: `manager.head("users/1")`; see ``Verb``.
    public var head: Verb { Verb(manager: self, method: .head) }
    /// `POST`: `manager.post("users", .json(user), as: User.self)`; see ``Verb``.
    public var post: Verb { Verb(manager: self, method: .post) }
    /// `PUT`: `manager.put("users/1", .json(user), as: User.self)`; see ``Verb``.
    public var put: Verb { Verb(manager: self, method: .put) }
    /// `PATCH`: `manager.patch("users/1", .form(changes))`; see ``Verb``.
    public var patch: Verb { Verb(manager: self, method: .patch) }
    /// `DELETE`: `manager.delete("users/1", as: Empty.self)`; see ``Verb``.
    public var delete: Verb { Verb(manager: self, method: .delete) }

    /// One HTTP method of a manager, called like a method: ``HTTPSessionManager/get``,
    /// ``HTTPSessionManager/post`` and the others are `Verb`s, so every verb takes the same
    /// arguments, written once here. A request goes out with either `parameters:` (encoded by
    /// ``HTTPSessionManager/requestSerializer``: in the query for GET, HEAD and DELETE, in the body
    /// otherwise, as AFNetworking) or a ``RequestContent`` (`.json`, `.form`, `.multipart`, bytes, a
    /// file, a stream). The response comes back decoded as the `Decodable` type given as `as:`
    /// (from JSON, with a `JSONDecoder` of the caller's, which is only read), else by
    /// ``HTTPSessionManager/responseSerializer``; ``stream(_:parameters:headers:timeout:acceptableStatusCodes:)``
    /// returns it unread. `timeout` is the whole request's deadline, redirects and retries included
    /// (``Request/timeoutInterval``; nil keeps the serializer's, else the transport's); past it the
    /// verb fails with `.timedOut`.
    ///
    /// With `as:`, a status outside 200–299, a content type that is not JSON, an empty body where a
    /// value is needed, or a body that does not decode is a ``CourierError``
    /// (`.unacceptableStatusCode`, `.unacceptableContentType`, `.emptyResponseBody`,
    /// `.decodingFailed`) that carries the response head and the bytes. Decode ``Empty`` (or an
    /// optional) from responses without a body.
    ///
    /// The forms with a ``RequestContent`` start on the caller's actor (SE-0420's `#isolation`,
    /// never passed by hand): the content is written there before the first suspension, so a body
    /// that is not `Sendable` and a multipart closure that uses `@MainActor` state are fine; the
    /// exchange and the decoding run off that actor. The completion-handler forms return the
    /// running task, or nil when the request could not be built (the handler then has the error);
    /// handlers run once, on the task's own Swift task. Where such a call is the only expression of
    /// a synchronous closure inside an async function (`withCheckedContinuation { c in
    /// manager.get("a") { c.resume(returning: $0) } }`), Swift 6.3 picks the async form for a
    /// callable value's trailing closure: write `completion:` there.
    public struct Verb: Sendable {
        /// The manager that builds and sends the requests.
        public let manager: HTTPSessionManager
        /// The method of every request this verb sends.
        public let method: HTTPMethod

        /// A verb of `manager` for any method, such as `HTTPMethod("PROPFIND")`.
        public init(manager: HTTPSessionManager, method: HTTPMethod) {
            self.manager = manager
            self.method = method
        }

        /// `method path` with `parameters`; the response decoded by the manager's ``HTTPSessionManager/responseSerializer``.
        /// - Throws: ``CourierError`` from building, sending or decoding; `.timedOut` past `timeout`.
        public func callAsFunction(
            _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], timeout: Duration? = nil,
            uploadProgress: ProgressHandler? = nil, downloadProgress: ProgressHandler? = nil
        ) async throws -> DataResponse<any Sendable> {
            try await self(
                path, parameters.map(RequestContent.parameters), headers: headers, timeout: timeout,
                uploadProgress: uploadProgress, downloadProgress: downloadProgress)
        }

        /// `method path` with `parameters`; the response's JSON decoded as `type`.
        /// - Throws: ``CourierError`` from building or sending, `.timedOut` past `timeout`, or the
        ///   response errors above.
        public func callAsFunction<Value: Decodable & Sendable>(
            _ path: String, parameters: Parameters? = nil, as type: Value.Type, headers: [String: String] = [:],
            timeout: Duration? = nil, decoder: JSONDecoder = JSONDecoder(),
            uploadProgress: ProgressHandler? = nil, downloadProgress: ProgressHandler? = nil
        ) async throws -> DataResponse<Value> {
            try await self(
                path, parameters.map(RequestContent.parameters), as: type, headers: headers, timeout: timeout,
                decoder: decoder, uploadProgress: uploadProgress, downloadProgress: downloadProgress)
        }

        /// `method path` with `content`; the response decoded by the manager's ``HTTPSessionManager/responseSerializer``.
        /// - Throws: as ``RequestContent`` and
        ///   ``HTTPSessionManager/send(_:_:_:headers:timeout:serializer:uploadProgress:downloadProgress:isolation:)``.
        public func callAsFunction(
            _ path: String, _ content: RequestContent?, headers: [String: String] = [:], timeout: Duration? = nil,
            uploadProgress: ProgressHandler? = nil, downloadProgress: ProgressHandler? = nil,
            isolation: isolated (any Actor)? = #isolation
        ) async throws -> DataResponse<any Sendable> {
            let serializer = ErasedResponseSerializer(manager.responseSerializer)
            return try await manager.send(
                method, path, content, headers: headers, timeout: timeout, serializer: serializer,
                uploadProgress: uploadProgress, downloadProgress: downloadProgress)
        }

        /// `method path` with `content`; the response's JSON decoded as `type`.
        /// - Throws: as ``RequestContent``, from sending, `.timedOut` past `timeout`, or the
        ///   response errors above.
        public func callAsFunction<Value: Decodable & Sendable>(
            _ path: String, _ content: RequestContent?, as type: Value.Type, headers: [String: String] = [:],
            timeout: Duration? = nil, decoder: JSONDecoder = JSONDecoder(), uploadProgress: ProgressHandler? = nil,
            downloadProgress: ProgressHandler? = nil, isolation: isolated (any Actor)? = #isolation
        ) async throws -> DataResponse<Value> {
            try await manager.send(
                method, path, content, headers: headers, timeout: timeout,
                // The caller's decoder is shared, never changed.
                serializer: DecodableResponseSerializer(type, makeDecoder: { decoder }),
                uploadProgress: uploadProgress, downloadProgress: downloadProgress)
        }

        /// The completion-handler form of ``callAsFunction(_:parameters:headers:timeout:uploadProgress:downloadProgress:)``,
        /// as AFHTTPSessionManager's block methods.
        @discardableResult
        public func callAsFunction(
            _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], timeout: Duration? = nil,
            uploadProgress: ProgressHandler? = nil, downloadProgress: ProgressHandler? = nil,
            completion: @escaping HTTPSessionManager.Completion
        ) -> SessionTask? {
            self(
                path, parameters.map(RequestContent.parameters), headers: headers, timeout: timeout,
                uploadProgress: uploadProgress, downloadProgress: downloadProgress, completion: completion)
        }

        /// The completion-handler form of ``callAsFunction(_:_:headers:timeout:uploadProgress:downloadProgress:isolation:)``;
        /// `content` is written before this returns.
        @discardableResult
        public func callAsFunction(
            _ path: String, _ content: RequestContent?, headers: [String: String] = [:], timeout: Duration? = nil,
            uploadProgress: ProgressHandler? = nil, downloadProgress: ProgressHandler? = nil,
            completion: @escaping HTTPSessionManager.Completion
        ) -> SessionTask? {
            let serializer = ErasedResponseSerializer(manager.responseSerializer)
            return manager.start(path, completion: completion) {
                try manager.session.makeTask(
                    kind: content?.taskKind ?? .data,
                    request: manager.request(method, path, content, headers: headers, timeout: timeout),
                    uploadProgress: uploadProgress, downloadProgress: downloadProgress
                ).task
            } deliver: {
                try $0.serialized(by: serializer)
            }
        }

        /// `method path` with `parameters`, returned with its body unread; see
        /// ``stream(_:_:headers:timeout:acceptableStatusCodes:isolation:)``.
        /// - Throws: as that method.
        public func stream(
            _ path: String, parameters: Parameters? = nil, headers: [String: String] = [:], timeout: Duration? = nil,
            acceptableStatusCodes: Set<Int>? = HTTPSessionManager.defaultStreamStatusCodes
        ) async throws -> StreamedResponse {
            try await stream(
                path, parameters.map(RequestContent.parameters), headers: headers, timeout: timeout,
                acceptableStatusCodes: acceptableStatusCodes)
        }

        /// `method path` with `content` (a JSON prompt for an API that answers with server-sent
        /// events or NDJSON, say), returned once the final head is in with its body unread
        /// (``StreamedResponse``: `body`, `lines()`, `serverSentEvents()`, `jsonLines(of:)`), through
        /// ``SessionManager/stream(_:overrides:uploadProgress:)``: redirects, cookies, the interceptor
        /// and the hooks apply as for the buffered verbs. Nothing is decoded; the status is checked
        /// against `acceptableStatusCodes` (nil accepts any, for reading an error's body). Starts on
        /// the caller's actor as the buffered forms with a ``RequestContent`` do.
        /// - Throws: ``CourierError`` from building or sending, and `.unacceptableStatusCode` with the
        ///   head for a status outside `acceptableStatusCodes` (the body is then left unread and the
        ///   exchange closed).
        public func stream(
            _ path: String, _ content: RequestContent?, headers: [String: String] = [:], timeout: Duration? = nil,
            acceptableStatusCodes: Set<Int>? = HTTPSessionManager.defaultStreamStatusCodes,
            isolation: isolated (any Actor)? = #isolation
        ) async throws -> StreamedResponse {
            let request = try manager.request(method, path, content, headers: headers, timeout: timeout)
            let response = try await manager.session.stream(request)
            guard let acceptableStatusCodes else { return response }
            return try response.validate(statusCodes: acceptableStatusCodes)
        }
    }
}
