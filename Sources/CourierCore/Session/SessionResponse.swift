import Foundation

/// The outcome of a completed task: the request as last sent, the final response, and the body.
///
/// A value type whose fields live in one shared, immutable box: an outcome is handed from the
/// transfer to the task, to every waiter and to the caller, and each of those copies then costs
/// one reference count rather than one per field, several of them through Foundation's value
/// witnesses. Setting a field makes a new box.
public struct SessionResponse: Sendable {
    /// The fields, kept together so that setting one copies them once into a new box.
    private struct Fields: Sendable {
        var request: Request
        var response: ResponseHead
        var data: Data
        var fileURL: URL?
        var metrics: TaskMetrics
    }

    private final class Storage: Sendable {
        let fields: Fields

        init(_ fields: Fields) {
            self.fields = fields
        }
    }

    private var storage: Storage

    /// Makes a response value.
    public init(
        request: Request, response: ResponseHead, data: Data = Data(), fileURL: URL? = nil, metrics: TaskMetrics? = nil
    ) {
        storage = Storage(
            Fields(request: request, response: response, data: data, fileURL: fileURL, metrics: metrics ?? .unrecorded))
    }

    /// The request as it was last sent (after redirects, adapters and resume headers).
    public var request: Request {
        get { storage.fields.request }
        set { update { $0.request = newValue } }
    }
    /// The final response's head (a redirect's own head when a hook stopped the redirect).
    public var response: ResponseHead {
        get { storage.fields.response }
        set { update { $0.response = newValue } }
    }
    /// The body bytes for data and upload tasks; empty for downloads.
    public var data: Data {
        get { storage.fields.data }
        set { update { $0.data = newValue } }
    }
    /// Where a download (or a data task turned into one) was moved; nil otherwise.
    public var fileURL: URL? {
        get { storage.fields.fileURL }
        set { update { $0.fileURL = newValue } }
    }
    /// Where the task's time went, attempt by attempt (see ``TaskMetrics``); no attempts for a
    /// response made by hand rather than by a task.
    public var metrics: TaskMetrics {
        get { storage.fields.metrics }
        set { update { $0.metrics = newValue } }
    }

    private mutating func update(_ change: (inout Fields) -> Void) {
        var fields = storage.fields
        change(&fields)
        storage = Storage(fields)
    }
}

extension SessionResponse {
    /// This response with its body run through `serializer`: the one place a task's outcome
    /// becomes a ``DataResponse``, for ``SessionManager`` and ``HTTPSessionManager`` alike.
    /// - Throws: the serializer's error.
    func serialized<Serializer: ResponseSerializer>(by serializer: Serializer) throws
        -> DataResponse<Serializer.SerializedObject>
    {
        let value = try serializer.serialize(request: request, response: response, data: data)
        return DataResponse(request: request, response: response, data: data, value: value)
    }
}
